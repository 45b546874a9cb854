"""The words of bench/conversations/team_chat.py: colleagues, services, projects, customers, incidents, the
team's decisions, personal facts and small talk, each with several phrasings.

Slots in templates: {n} the person a memory is about, {m} another colleague, {pos} the person's possessive
pronoun, {sub} the subject pronoun; the rest are named where they are used. A personal fact's memory
phrasings and its paraphrase question share few content words on purpose."""

# (first name, possessive, subject): names recur across an agent's memories, so a name alone decides little
PEOPLE = [
    ("Dana", "her", "she"),
    ("Marco", "his", "he"),
    ("Priya", "her", "she"),
    ("Tomasz", "his", "he"),
    ("Aisha", "her", "she"),
    ("Ravi", "his", "he"),
    ("Lena", "her", "she"),
    ("Olga", "her", "she"),
    ("Kwame", "his", "he"),
    ("Sofia", "her", "she"),
    ("Jonas", "his", "he"),
    ("Mei", "her", "she"),
    ("Diego", "his", "he"),
    ("Hana", "her", "she"),
    ("Felix", "his", "he"),
    ("Nadia", "her", "she"),
    ("Omar", "his", "he"),
    ("Ingrid", "her", "she"),
    ("Tariq", "his", "he"),
    ("Chloe", "her", "she"),
    ("Bruno", "his", "he"),
    ("Yuki", "their", "they"),
    ("Emeka", "his", "he"),
    ("Saanvi", "her", "she"),
    ("Lukas", "his", "he"),
    ("Amara", "her", "she"),
    ("Pedro", "his", "he"),
    ("Greta", "her", "she"),
    ("Hamid", "his", "he"),
    ("Niamh", "her", "she"),
    ("Viktor", "his", "he"),
    ("Zara", "her", "she"),
    ("Kenji", "his", "he"),
    ("Beatriz", "her", "she"),
    ("Arjun", "his", "he"),
    ("Elif", "her", "she"),
    ("Mateo", "his", "he"),
    ("Freya", "her", "she"),
    ("Sipho", "his", "he"),
    ("Leila", "her", "she"),
    ("Anton", "his", "he"),
    ("Rosa", "her", "she"),
    ("Idris", "his", "he"),
    ("Maren", "her", "she"),
    ("Callum", "his", "he"),
    ("Noor", "their", "they"),
    ("Julien", "his", "he"),
    ("Tess", "her", "she"),
    ("Andrei", "his", "he"),
    ("Paloma", "her", "she"),
    ("Wen", "his", "he"),
    ("Astrid", "her", "she"),
    ("Rafael", "his", "he"),
    ("Keiko", "her", "she"),
    ("Samir", "his", "he"),
    ("Ottilie", "her", "she"),
    ("Declan", "his", "he"),
    ("Farah", "her", "she"),
    ("Henrik", "his", "he"),
    ("Imani", "her", "she"),
    ("Alex", "their", "they"),
    ("Sunil", "his", "he"),
    ("Vera", "her", "she"),
    ("Malik", "his", "he"),
]

ROLES = ["backend engineer", "frontend engineer", "site reliability engineer", "product designer",
         "data analyst", "mobile engineer", "customer success manager", "product manager", "QA engineer",
         "solutions engineer", "technical writer", "security engineer"]  # fmt: skip

# a service: (name, what it does, the same said otherwise)
SERVICES = [
    (
        "ledger-sync",
        "the job that pushes invoices to accounting",
        "sending bills over to the finance software",
    ),
    ("auth-gateway", "single sign-on and sessions", "how people log in"),
    ("search-indexer", "the pipeline feeding search", "keeping lookups up to date"),
    ("notify-hub", "emails, texts and push notifications", "the messages we send users"),
    ("image-resizer", "thumbnails for uploaded photos", "shrinking pictures people upload"),
    ("report-builder", "the monthly PDF reports", "the month-end documents clients download"),
    ("billing-core", "plans, invoices and payments", "taking money from clients' cards"),
    ("export-worker", "CSV and spreadsheet exports", "letting clients download their data"),
    ("webhook-relay", "outgoing webhooks to customers", "calling back into client systems"),
    ("calendar-bridge", "syncing with Google and Outlook calendars", "keeping agendas in step"),
    ("rate-limiter", "API quotas per customer", "throttling integrations that call us too often"),
    ("geo-router", "sending traffic to the nearest region", "directing users to a nearby data centre"),
    ("pricing-engine", "currency conversion and rounding", "turning euros into dollars"),
    ("audit-trail", "the change history customers can download", "the log of who edited what"),
]
SERVICE_PARAPHRASE = ["Who is responsible for {para}?", "Which colleague looks after {para}?"]

# a project: (codename, what it is, the same said otherwise)
PROJECTS = [
    ("Falcon", "the rebuilt billing dashboard", "the new screens where customers see what they owe"),
    ("Juniper", "the Android app rewrite", "redoing the phone app for Google's platform"),
    ("Tidewater", "the move to the Frankfurt region", "relocating our servers to Germany"),
    ("Basalt", "the Postgres 16 upgrade", "bringing the main database to its newest major version"),
    ("Marigold", "self-serve onboarding", "letting new signups get started without a sales call"),
    ("Lantern", "the public status page", "a website that tells clients when things are down"),
    ("Quokka", "the partner API", "letting resellers integrate programmatically"),
    ("Orchid", "accessibility fixes across the web app", "making the product usable with screen readers"),
    ("Granite", "SOC 2 readiness", "the security certification auditors will check"),
    ("Kestrel", "the offline mode for the field app", "letting technicians work without signal"),
    ("Meridian", "usage-based pricing", "charging customers by how much they consume"),
    ("Sparrow", "the in-app chat widget", "talking to support from inside the product"),
]

SLIP_REASONS = [
    "the SOC 2 audit ate two sprints",
    "a dependency upgrade broke the build for a week",
    "design asked for another round of user testing",
    "the payments provider changed its API",
    "half the team was out with flu",
    "legal wanted to review the data retention terms",
    "load tests fell over at twice the normal traffic",
    "the pilot customer asked for SSO first",
    "a security review found an injection bug",
    "the contractor building the UI left",
    "translations for German and French came back late",
    "the staging cluster was down for days",
]

CUSTOMERS = ["Northwind", "Brightwater Dental", "Kestrel Freight", "Alder & Finch", "Copperline",
             "Helios Clinics", "Bluefen Farms", "Ostrava Steel", "Pinecrest Schools", "Marlow Legal",
             "Tindall Retail", "Quayside Hotels", "Vantage Realty", "Solano Foods", "Redkite Media",
             "Hollis Insurance", "Greyfield Logistics", "Ember Fitness"]  # fmt: skip

# an incident's symptom: (as the memory puts it, as a question paraphrases it after the customer's name,
# the services that could plausibly cause it)
SYMPTOMS = [
    ("failed SSO logins", "couldn't sign in", ("auth-gateway", "geo-router")),
    ("duplicate invoices", "got billed twice for one month", ("billing-core", "ledger-sync")),
    ("CSV exports timing out", "never managed to download their data", ("export-worker", "report-builder")),
    (
        "bounced password reset emails",
        "never received account recovery links",
        ("notify-hub", "auth-gateway"),
    ),
    (
        "a blank dashboard after the upgrade",
        "saw an empty home screen",
        ("geo-router", "search-indexer", "billing-core", "audit-trail"),
    ),
    ("webhooks firing twice", "received every callback two times", ("webhook-relay",)),
    (
        "timestamps in the wrong timezone",
        "saw times shifted by several hours",
        ("report-builder", "calendar-bridge"),
    ),
    ("stale search results", "kept finding outdated records when looking things up", ("search-indexer",)),
    (
        "slow page loads in the EU",
        "waited ages for anything to open in Europe",
        ("geo-router", "image-resizer"),
    ),
    ("missing push notifications", "stopped getting alerts on their phones", ("notify-hub",)),
    ("a 502 error at checkout", "couldn't finish paying", ("billing-core", "pricing-engine", "rate-limiter")),
    ("photo uploads failing", "couldn't attach pictures", ("image-resizer",)),
    (
        "gaps in the monthly report",
        "had rows absent from their month-end numbers",
        ("report-builder", "ledger-sync", "export-worker"),
    ),
    ("rate-limit errors on the API", "were throttled when integrating", ("rate-limiter",)),
    ("rounding errors on amounts", "saw totals a cent off", ("pricing-engine", "billing-core")),
    ("calendar sync dropping events", "lost meetings from their agendas", ("calendar-bridge",)),
    (
        "an expired TLS certificate",
        "saw browser security warnings",
        ("geo-router", "auth-gateway", "webhook-relay"),
    ),
    (
        "a memory leak in the worker",
        "had jobs crawl until a restart",
        ("export-worker", "search-indexer", "report-builder", "image-resizer", "audit-trail"),
    ),
]

INCIDENT_SHAPES = [
    "{cust} reported {symptom} ({ticket}); {n} traced it to {svc} and fixed it on {date}.",
    "Re {ticket}, {symptom} at {cust}: {n} shipped the fix in {svc} on {date}.",
    "{n} closed {ticket} on {date}: {cust} had {symptom}, caused by a bad deploy of {svc}.",
    "On {date} {n} resolved {ticket}, {cust}'s {bare}, after finding the bug in {svc}.",
]

# the same question, several ways; {inc} is "<customer>'s <symptom>" or "the <symptom> at <customer>"
INCIDENT_FIXER = ["Who fixed {inc}?", "Which engineer resolved {inc}?", "Who sorted out {inc}?"]
FIXER_MANAGER_QUESTIONS = ["Who is the manager of the person who fixed {inc}?",
                           "Who does the person who resolved {inc} report to?"]  # fmt: skip
INCIDENT_PARAPHRASE = [
    "Who got things working again when {cust} {para}?",
    "Which colleague dealt with it when {cust} {para}?",
    "Who was the one who helped after {cust} {para}?",
]
INCIDENT_SERVICE_PARAPHRASE = ["Which service was to blame when {cust} {para}?",
                               "What system caused it when {cust} {para}?"]  # fmt: skip
INCIDENT_DATE = ["When was {inc} fixed?", "On what day did {inc} get resolved?", "When did {inc} get closed?"]
TICKET_QUESTIONS = ["Who fixed {ticket}?", "Which customer opened {ticket}?", "What was {ticket} about?",
                    "Which service caused {ticket}?"]  # fmt: skip

REPORTS_SHAPES = [
    "{n} reports to {m}.",
    "{m} is {n}'s manager.",
    "{n} has weekly one-to-ones with {m}, {pos} line manager.",
    "{n} sits in {m}'s team and reports to {m} directly.",
]
MANAGER_QUESTIONS = ["Who does {n} report to?", "Who is {n}'s manager?", "Who is {n}'s line manager?"]

OWNS_SHAPES = [
    "{n} owns {svc}, {what}.",
    "{n} is the go-to person for {svc}, {what}.",
    "Questions about {svc} ({what}) go to {n}, who maintains it.",
    "{svc}, {what}, is looked after by {n}.",
]
OWNER_QUESTIONS = ["Who owns {svc}?", "Who maintains {svc}?", "Who should I ask about {svc}?"]
HANDOFF_SHAPES = [
    "{m} handed {svc} over to {n} before starting a sabbatical.",
    "{svc} changed hands: {n} took it over from {m} on {date}.",
    "{n} is the new owner of {svc}; {m} moved on to other work.",
]
CURRENT_OWNER_QUESTIONS = ["Who owns {svc} now?", "Who looks after {svc} these days?",
                           "Who is currently responsible for {svc}?"]  # fmt: skip

LEAD_SHAPES = ["{n} is leading {p}, {what}.", "{p} ({what}) is {n}'s project.",
               "{n} took the lead on {p}, {what}."]  # fmt: skip
LEAD_QUESTIONS = ["Who leads {p}?", "Who is running project {p}?", "Whose project is {p}?"]
LEAD_PARAPHRASE = ["Who is in charge of {para}?", "Which colleague heads up {para}?"]
LEAD_MANAGER_QUESTIONS = ["Who manages the lead of {p}?", "Who does the person running {p} report to?"]
SHIP_QUESTIONS = ["When did {p} ship?", "On what date did {p} go live?"]
TARGET_QUESTIONS = ["When is {p} due now?", "What is the latest target date for {p}?"]
FIRST_TARGET_QUESTIONS = ["When was {p} first due?", "What was the original target date for {p}?"]
PLAN_SHAPES = ["{p} is planned to ship on {date}.", "Target date for {p}: {date}.",
               "{n} told the team {p} should be done by {date}."]  # fmt: skip
SLIP_SHAPES = ["{p} slipped to {date} because {why}.", "New date for {p} is {date}; {why}.",
               "{n} pushed {p} back to {date}, since {why}."]  # fmt: skip
SHIP_SHAPES = ["{p} shipped on {date}.", "{p} went live for all customers on {date}.",
               "{n} announced on {date} that {p} is out."]  # fmt: skip

# a decision that is reversed later: (the first decision, its reversal, questions about the current state)
DECISIONS = [
    (
        "{n} moved the daily standup to 9:15.",
        "Standup is back at 10:00; {n} said 9:15 clashed with the school run.",
        ["What time is the daily standup now?", "When does standup happen these days?"],
    ),
    (
        "{n} announced no production deploys on Fridays from now on.",
        "The Friday deploy freeze is over: {n} lifted it once canary checks landed.",
        ["Can we deploy to production on Fridays now?", "Is the Friday deploy freeze still in place?"],
    ),
    (
        "Every pull request now needs two approvals, {n} decided.",
        "{n} dropped code review back to one approval because reviews were piling up.",
        [
            "How many approvals does a pull request need now?",
            "What is the current code review approval rule?",
        ],
    ),
    (
        "{n} set the office days to Tuesday and Thursday.",
        "{n} switched the office days to Monday and Wednesday after the desk survey.",
        ["Which days is the team in the office now?", "What are the current office days?"],
    ),
    (
        "{n} decided CI moves from Jenkins to GitHub Actions.",
        "The CI migration was called off; {n} says we stay on Jenkins.",
        ["Which CI system are we on now?", "Did the CI move away from Jenkins happen?"],
    ),
    (
        "Wednesdays are meeting-free from next week, {n} announced.",
        "{n} scrapped meeting-free Wednesdays because customer calls kept landing on them.",
        ["Do we still have meeting-free Wednesdays?", "Is there a meeting-free day now?"],
    ),
    (
        "Releases go out every two weeks now, {n} decided.",
        "{n} put releases back on a weekly train.",
        ["How often do we release now?", "What is the current release cadence?"],
    ),
    (
        "{n} moved incident chatter to the #ops-war-room channel.",
        "#ops-war-room was archived and incidents are back in #incidents, per {n}.",
        ["Which channel do incidents go to now?", "Where should I post about an outage now?"],
    ),
    (
        "Sprints are three weeks long from now on, {n} said.",
        "{n} returned the team to two-week sprints after the retro.",
        ["How long are sprints now?", "What is the current sprint length?"],
    ),
    (
        "{n} chose Linear to replace Jira for ticket tracking.",
        "The Linear switch was reversed; {n} kept everyone on Jira.",
        ["Which tracker do we use for tickets now?", "Did we move off Jira?"],
    ),
    (
        "On-call shifts now change over on Wednesdays, {n} decided.",
        "{n} moved the on-call handover back to Mondays.",
        ["On which day does the on-call handover happen now?", "When do on-call shifts change over now?"],
    ),
]

# a personal fact: (memory phrasings, a question in the fact's own words, a paraphrase sharing few words)
FACTS = [
    (
        ["{n} avoids wheat since {pos} coeliac diagnosis.", "{n} has coeliac disease, so no bread or pasta."],
        "Who has coeliac disease?",
        "Which colleague can't eat gluten?",
    ),
    (
        ["{n} went vegan last year.", "{n} doesn't eat meat, fish, eggs or dairy."],
        "Who is vegan?",
        "Who sticks to a fully plant-based diet?",
    ),
    (
        ["{n} is allergic to peanuts and carries an EpiPen.", "{n} has a severe peanut allergy."],
        "Who has a peanut allergy?",
        "Whose lunch must be free of nuts?",
    ),
    (
        ["{n} is lactose intolerant.", "Milk makes {n} ill, so {sub} orders oat lattes."],
        "Who is lactose intolerant?",
        "Who gets sick from dairy?",
    ),
    (
        ["{n} doesn't drink alcohol.", "{n} is teetotal and prefers the mocktails at team drinks."],
        "Who doesn't drink alcohol?",
        "Which teammate skips the beer and wine at socials?",
    ),
    (
        [
            "{n} prefers written async updates to calls.",
            "{n} would rather read a status doc than join a call.",
        ],
        "Who prefers async written updates?",
        "Who wants project news in writing rather than spoken?",
    ),
    (
        ["{n} never takes meetings before 10 am.", "Don't book {n} before ten in the morning."],
        "Who won't take meetings before 10 am?",
        "Who is unavailable early in the day?",
    ),
    (
        [
            "{n} works a four-day week and is off on Fridays.",
            "Fridays are {n}'s day off; {sub} works four days.",
        ],
        "Who is off on Fridays?",
        "Who isn't around at the end of the working week?",
    ),
    (
        [
            "{n} leaves at 3 pm on weekdays to collect {pos} kids.",
            "{n} logs off at three for the school pickup.",
        ],
        "Who leaves at 3 pm for the school pickup?",
        "Which colleague heads off mid-afternoon to fetch children?",
    ),
    (
        ["{n} works remotely from Porto.", "{n} is based in Porto and joins everything remotely."],
        "Who works remotely from Porto?",
        "Which teammate lives in Portugal?",
    ),
    (
        [
            "{n} uses a split ergonomic keyboard because of RSI.",
            "Wrist pain means {n} types on a split keyboard.",
        ],
        "Who uses a split keyboard?",
        "Whose hands hurt from typing too much?",
    ),
    (
        ["{n} speaks fluent Japanese.", "{n} grew up in Osaka and still speaks Japanese at home."],
        "Who speaks Japanese?",
        "Who could translate for a client in Tokyo?",
    ),
    (
        [
            "{n} was an accountant before switching to software.",
            "Before engineering, {n} did bookkeeping for ten years.",
        ],
        "Who used to be an accountant?",
        "Which colleague has a background in finance?",
    ),
    (
        ["{n} is the office's trained first aider.", "{n} holds the first aid certificate for the office."],
        "Who is the office first aider?",
        "Who should we call if someone faints at work?",
    ),
    (
        ["{n} trains for marathons and runs before work.", "{n} is preparing for the Berlin marathon."],
        "Who runs marathons?",
        "Which colleague does long-distance races?",
    ),
    (
        ["{n} plays bass in a punk band on weekends.", "{n} joined a punk band as its bassist."],
        "Who plays bass in a band?",
        "Which teammate is a musician outside work?",
    ),
    (
        ["{n} is learning Dutch for a move to Utrecht.", "{n} takes Dutch lessons twice a week."],
        "Who is learning Dutch?",
        "Who is studying the language of the Netherlands?",
    ),
    (
        ["{n} hates having {pos} name shortened.", "{n} dislikes nicknames of any kind."],
        "Who dislikes nicknames?",
        "Which colleague wants to be called by the full name?",
    ),
    (
        [
            "{n} keeps the camera off in calls because of slow home internet.",
            "{n}'s video is off on calls: poor bandwidth.",
        ],
        "Who keeps the camera off in calls?",
        "Whose face do we never see in video meetings?",
    ),
    (
        ["{n} wants an agenda before agreeing to any meeting.", "No agenda, no meeting, says {n}."],
        "Who needs an agenda before a meeting?",
        "Who refuses invites that don't say what will be discussed?",
    ),
    (
        [
            "{n} is colour-blind, so red and green charts don't work for {pos} eyes.",
            "{n} can't tell red from green.",
        ],
        "Who is colour-blind?",
        "Which colleague has trouble with some chart colours?",
    ),
    (
        ["{n} is allergic to cats.", "Cat hair sets off {n}'s allergies."],
        "Who is allergic to cats?",
        "Who would sneeze if someone brought a kitten to the office?",
    ),
    (
        ["{n} is expecting a baby in the autumn.", "{n} and {pos} partner are expecting their first child."],
        "Who is expecting a baby?",
        "Which colleague will soon become a parent?",
    ),
    (
        ["{n} does all {pos} editing in Vim.", "{n} refuses to leave Vim for any IDE."],
        "Who uses Vim?",
        "Which developer sticks to a terminal text editor?",
    ),
    (
        ["{n} is on a standing desk all day for {pos} back.", "Back trouble keeps {n} at a standing desk."],
        "Who uses a standing desk?",
        "Who works on their feet because of spinal problems?",
    ),
    (
        [
            "{n} likes code review comments to be blunt.",
            "{n} asked reviewers to skip the politeness and be direct.",
        ],
        "Who wants blunt code review comments?",
        "Who prefers frank feedback on their pull requests?",
    ),
    (
        ["{n} fasts during Ramadan, so no lunch meetings with {sub} then.", "{n} observes the Ramadan fast."],
        "Who observes Ramadan?",
        "Whose lunchtime should be left free during the holy month?",
    ),
    (
        ["{n} is hard of hearing and relies on live captions.", "Turn captions on when {n} is in a call."],
        "Who relies on live captions?",
        "Which colleague needs subtitles in meetings?",
    ),
    (
        ["{n} volunteers as a mountain rescue medic.", "{n} is on call for mountain rescue some weekends."],
        "Who volunteers for mountain rescue?",
        "Which teammate helps save hikers in the hills?",
    ),
    (
        ["{n} is a certified Kubernetes administrator.", "{n} passed the CKA Kubernetes exam."],
        "Who is a certified Kubernetes administrator?",
        "Who holds the cluster orchestration certification?",
    ),
    (
        [
            "{n} prefers Slack DMs over email for anything urgent.",
            "Email {n} and wait days; DM {n} and it's minutes.",
        ],
        "Who prefers Slack DMs over email?",
        "Which colleague answers chat messages faster than mail?",
    ),
    (
        ["{n} commutes by train from Brighton.", "{n} takes the Brighton train in every office day."],
        "Who commutes from Brighton?",
        "Who travels in by rail from the south coast?",
    ),
]

ANCHORS = [
    (
        "offsite",
        [
            "The team offsite in {place} runs {d1} to {d2}; {n} organised it.",
            "{n} booked the offsite: {place}, from {d1} to {d2}.",
        ],
        ["Lisbon", "Sintra", "the Lake District"],
    ),
    (
        "hackathon",
        [
            "The spring hackathon is {d1} to {d2}, hosted by {n} at {place}.",
            "{n} is running the hackathon from {d1} to {d2} in {place}.",
        ],
        ["the Leeds office", "a rented loft"],
    ),
    (
        "all-hands",
        [
            "The quarterly all-hands is on {d1} at {place}; {n} is presenting.",
            "{n} set the all-hands for {d1} in {place}.",
        ],
        ["the Barbican", "the big meeting room"],
    ),
    (
        "office move",
        [
            "The office move to {place} happens {d1} to {d2}, coordinated by {n}.",
            "{n} says we move into {place} between {d1} and {d2}.",
        ],
        ["Shoreditch", "Canal Street"],
    ),
    (
        "board meeting",
        [
            "The board meeting is on {d1} at {place}; {n} is preparing the deck.",
            "{n} confirmed the board meeting for {d1}, held at {place}.",
        ],
        ["the investors' office", "the Ritz"],
    ),
]
EVENT_DATE_QUESTIONS = ["When is the {kind}?", "What dates is the {kind} on?"]
SHIPPED_AFTER_QUESTIONS = ["Which project shipped the week after the {kind}?",
                           "What went live in the days after the {kind}?"]  # fmt: skip
ANCHOR_WHERE = {"offsite": "Where is the team offsite?", "hackathon": "Where is the hackathon held?",
                "all-hands": "Where is the all-hands?", "office move": "Where is the office moving to?",
                "board meeting": "Where is the board meeting?"}  # fmt: skip

ROTA_SHAPES = ["{n} is on call for {pager} the week of {date}.", "{pager}, week of {date}: {n}.",
               "{n} has {pager} the week starting {date}."]  # fmt: skip
SWAP_SHAPES = ["{m} swapped with {n}, so {n} covers {pager} the week of {date}.",
               "Change to the rota: {n} takes {pager} the week of {date} instead of {m}."]  # fmt: skip
PAGERS = ["the infra pager", "the payments pager", "the platform rota", "the database pager"]

ACCOUNT_QUESTIONS = ["Who handles the {cust} account?", "Who is the account manager for {cust}?"]
ACCOUNT_SHAPES = ["{n} handles the {cust} account.", "{cust} is {n}'s account.",
                  "{n} is the account manager for {cust}."]  # fmt: skip
JOIN_QUESTIONS = ["When did {n} join?", "When did {n} start with us?"]
JOIN_SHAPES = ["{n} joined as our new {role} on {date}.", "Welcome {n}, who started on {date} as a {role}.",
               "{n} started on {date}; {sub} is the new {role}."]  # fmt: skip

FLAG_FEATURES = ["the new checkout", "dark mode", "bulk editing", "the redesigned sidebar", "CSV import v2",
                 "smart reminders", "the beta search", "two-factor prompts", "usage alerts", "team folders"]  # fmt: skip
FLAG_QUESTIONS = ["Who created {flag}?", "What does {flag} gate?"]
FLAG_SHAPES = ["{n} put {feature} behind the flag {flag}.", "{n} set up {flag} so {feature} can ship dark.",
               "{n} created {flag} to gate {feature}."]  # fmt: skip
HOST_KINDS = ["db-replica", "cache-eu", "batch-node", "queue-broker", "build-agent", "search-node"]
HOST_PROBLEMS = ["a full disk", "a kernel panic", "a failed RAID controller", "running out of inodes",
                 "a botched OS upgrade", "memory errors on the host"]  # fmt: skip
HOST_QUESTIONS = ["Why was {host} rebuilt?", "Who rebuilt {host}?"]
HOST_SHAPES = ["{n} rebuilt {host} after {problem}.", "{host} went down ({problem}); {n} rebuilt it.",
               "{n} replaced {host} because of {problem}."]  # fmt: skip

# small talk: it mentions colleagues, services and projects but answers no question
FILLERS = [
    "{n} said the printer on the second floor is jammed again.",
    "{n} and {m} spent lunch arguing about whether a hot dog is a sandwich.",
    "{n} posted a meme about {svc} retrying forever.",
    "{n} wished {m} a great weekend.",
    "{n} complained that the air conditioning is set to arctic.",
    "{n} asked if anyone has a spare USB-C to HDMI adapter.",
    "{n} recommended a podcast about the history of shipping containers.",
    "{n} said the {p} sync ran long because of a fire drill.",
    "{n} shared a photo of the sunset from the roof terrace.",
    "{n} thinks the new logo looks like a sleepy owl.",
    "{n} reminded everyone to water the office plants.",
    "{n} is back from a long weekend in Edinburgh.",
    "{n} lost the office table-tennis final to {m} again.",
    "{n} found a bug in the coffee machine's firmware, allegedly.",
    "{n} asked who keeps moving the whiteboard markers.",
    "{n} said {svc} logs are the most poetic thing they read all week.",
    "{n} and {m} are doing a puzzle in the kitchen at lunch.",
    "{n} mentioned the lift is out of order until Thursday.",
    "{n} congratulated {m} on a clean on-call week.",
    "{n} says the Wi-Fi on the fourth floor keeps dropping.",
    "{n} joked that {p} has had more names than release dates.",
    "{n} brought cinnamon buns for the whole floor.",
    "{n} asked for recommendations for a good mechanical pencil.",
    "{n} said the fire alarm test is at noon on Tuesday.",
    "{n} and {m} compared notes on the new espresso grinder.",
    "{n} posted a gif of a cat falling off a desk.",
    "{n} wondered whether anyone else's laptop fan sounds like a jet.",
    "{n} said thanks to {m} for the help with a tricky merge.",
    "{n} asked if the parking permits have been renewed.",
    "{n} is watching a documentary series about deep-sea fish.",
    "{n} found an old {svc} diagram in a drawer and framed it.",
    "{n} noted the kitchen dishwasher is finished and needs emptying.",
    "{n} said {m}'s slides had the best clip art of the quarter.",
    "{n} is stuck in traffic and will be ten minutes late.",
    "{n} reported that the meeting-room booking screen shows the wrong week.",
    "{n} celebrated five hundred commits with a cake emoji.",
    "{n} is reorganising the bookshelf by cover colour.",
    "{n} asked whether anyone wants to join a quiz team on Thursday.",
    "{n} says it is raining sideways outside the office.",
]
