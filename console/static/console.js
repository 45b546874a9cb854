// The console's only script besides htmx: countdowns for Mechanic's grants, and closing dialogs.
// No inline scripts anywhere (the Content-Security-Policy forbids them).
(function () {
  "use strict";
  var GRACE = 0.5; // seconds past the deadline before reloading, so the server already agrees it lapsed

  function format(seconds) {
    var s = Math.max(0, Math.floor(seconds));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }

  // A countdown counts down the milliseconds the server computed (no clock skew). Just after zero the page
  // reloads itself, and the server, which checks the grant on every request, renders it closed.
  function startCountdowns(root) {
    root.querySelectorAll("[data-countdown]").forEach(function (el) {
      if (el.dataset.started) return;
      el.dataset.started = "1";
      var deadline = Date.now() + Number(el.dataset.ms || 0);
      var timer = setInterval(function () {
        var left = (deadline - Date.now()) / 1000;
        el.textContent = format(Math.ceil(left));
        if (left <= -GRACE) {
          clearInterval(timer);
          el.classList.add("expired");
          window.location.reload();
        }
      }, 250);
    });
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-dismiss]");
    if (!button) return;
    var target = document.getElementById(button.dataset.dismiss);
    if (target) {
      target.className = "";
      target.innerHTML = "";
    }
  });

  document.addEventListener("keydown", function (event) {
    var open = document.querySelector(".confirm.open");
    if (event.key === "Escape" && open) {
      open.className = "";
      open.innerHTML = "";
    }
  });

  function boot() {
    startCountdowns(document);
    if (window.htmx) {
      window.htmx.onLoad(function (el) { startCountdowns(el.querySelectorAll ? el : document); });
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else boot();
})();
