"""The admin console's shared web layer, used by every page's blueprint: the fragment-or-page helper
(`htmx`), admin-only access and security headers (`security`), bounded URL and form inputs (`inputs`),
template filters (`filters`) and lookups (`lookups`). It imports no blueprint; `console/pages.py`
registers them.
"""

from __future__ import annotations
