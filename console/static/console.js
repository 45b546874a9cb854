// The console's only script besides htmx: countdowns for Mechanic's grants, dialogs that hold and return
// keyboard focus, the collapsible menu, and local times.
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

  // ----- dialogs: focus moves in, Tab stays in, Escape or Cancel closes, focus returns to the opener -----
  var opener = null;
  var FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), select, textarea, [tabindex]:not([tabindex="-1"])';

  function focusables(root) {
    return Array.prototype.filter.call(root.querySelectorAll(FOCUSABLE), function (el) {
      return el.offsetParent !== null || el === document.activeElement;
    });
  }

  function openDialog(dialog) {
    if (dialog.dataset.opened) return;
    dialog.dataset.opened = "1";
    var first = dialog.querySelector("[autofocus]") || focusables(dialog)[0];
    if (first) first.focus();
  }

  function closeDialog(dialog) {
    dialog.className = "";
    dialog.innerHTML = "";
    dialog.removeAttribute("role");
    delete dialog.dataset.opened;
    if (opener && document.body.contains(opener)) opener.focus();
    opener = null;
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-dismiss]");
    if (button) {
      var target = document.getElementById(button.dataset.dismiss);
      if (target) closeDialog(target);
      return;
    }
    var toggle = event.target.closest(".menu-toggle");
    if (toggle) {
      var open = toggle.getAttribute("aria-expanded") !== "true";
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
      document.body.classList.toggle("menu-open", open);
    }
  });

  document.addEventListener("keydown", function (event) {
    var dialog = document.querySelector(".confirm.open");
    if (!dialog) return;
    if (event.key === "Escape") {
      event.preventDefault();
      closeDialog(dialog);
      return;
    }
    if (event.key !== "Tab") return;
    var items = focusables(dialog);
    if (!items.length) { event.preventDefault(); return; }
    var first = items[0], last = items[items.length - 1];
    if (!dialog.contains(document.activeElement)) { event.preventDefault(); first.focus(); }
    else if (event.shiftKey && document.activeElement === first) { event.preventDefault(); last.focus(); }
    else if (!event.shiftKey && document.activeElement === last) { event.preventDefault(); first.focus(); }
  });

  // The element that asked for a dialog gets focus back when it closes.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail && event.detail.elt;
    if (elt && elt.getAttribute && elt.getAttribute("hx-target") === "#confirm") opener = elt;
  });

  // ----- focus kept after a swap that replaced the focused control (a row re-rendering itself) -----
  var focusedId = null;
  document.addEventListener("htmx:beforeSwap", function () {
    var active = document.activeElement;
    focusedId = active && active.id ? active.id : null;
  });

  function afterLoad(el) {
    var root = el.querySelectorAll ? el : document;
    startCountdowns(root);
    var dialog = (el.matches && el.matches(".confirm.open")) ? el : root.querySelector(".confirm.open");
    if (dialog) openDialog(dialog);
    if (focusedId && (!document.activeElement || document.activeElement === document.body)) {
      var again = document.getElementById(focusedId);
      if (again) again.focus();
    }
    // A swapped fragment may carry a message to announce (data-announce): screen readers hear it.
    var say = root.querySelector ? root.querySelector("[data-announce]") : null;
    if (el.dataset && el.dataset.announce) say = el;
    var region = document.getElementById("announce");
    if (say && region) region.textContent = say.dataset.announce;
  }

  function boot() {
    startCountdowns(document);
    var dialog = document.querySelector(".confirm.open");
    if (dialog) openDialog(dialog);
    if (window.htmx) window.htmx.onLoad(afterLoad);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else boot();
})();
