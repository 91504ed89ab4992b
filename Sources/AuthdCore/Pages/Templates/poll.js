// A waiting step (a form with data-poll) asks every data-interval seconds whether it may go on:
// 202 means not yet; anything else submits the form, which then does what its button does.
// Without this script the person presses the button themselves.
(function () {
  "use strict";
  var form = document.querySelector("form[data-poll]");
  if (!form) { return; }
  var every = Math.max(1, parseInt(form.getAttribute("data-interval"), 10) || 2) * 1000;
  function ask() {
    fetch(form.getAttribute("data-poll"), {
      method: "POST", credentials: "same-origin", redirect: "manual",
      body: new URLSearchParams(new FormData(form))
    }).then(function (response) {
      if (response.status === 202) { setTimeout(ask, every); } else { form.submit(); }
    }).catch(function () { setTimeout(ask, every * 2); });
  }
  setTimeout(ask, every);
})();
