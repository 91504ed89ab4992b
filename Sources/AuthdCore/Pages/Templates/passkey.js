// authd's one script: the WebAuthn ceremony of a passkey form. The options come from the page's
// data-options; the answer goes back in the form's hidden `credential` field as WebAuthn's JSON.
// On /login, "Sign in with a passkey" (#passkey-start) starts the ceremony at once: it posts its
// form in the background, reads the options from the step that answers, and sends the answer to
// that step's form. Without this script the button posts and that step is shown as a page.
(function () {
  "use strict";
  var box = document.getElementById("passkey");
  var start = document.getElementById("passkey-start");
  if (!box && !start) return;
  var form = document.getElementById("passkey-form");
  var status = document.getElementById("passkey-status");
  // The page's sentences, in its language, carried by the status line (English where it has none).
  function say(which, fallback, name) {
    var text = (status && status.getAttribute("data-" + which)) || fallback;
    status.textContent = text.replace("{name}", name || "");
  }
  function bytes(text) {
    var b64 = text.replace(/-/g, "+").replace(/_/g, "/");
    while (b64.length % 4) b64 += "=";
    return Uint8Array.from(atob(b64), function (c) { return c.charCodeAt(0); });
  }
  function text(buffer) {
    var s = "";
    new Uint8Array(buffer).forEach(function (b) { s += String.fromCharCode(b); });
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function descriptors(list) {
    return (list || []).map(function (d) { return { type: d.type, id: bytes(d.id) }; });
  }
  function ceremony(from) {
    var o = JSON.parse(from.getAttribute("data-options"));
    if (from.getAttribute("data-mode") === "create") {
      return navigator.credentials.create({ publicKey: {
        rp: o.rp, user: { id: bytes(o.user.id), name: o.user.name, displayName: o.user.displayName },
        challenge: bytes(o.challenge), pubKeyCredParams: o.pubKeyCredParams, timeout: o.timeout,
        excludeCredentials: descriptors(o.excludeCredentials), authenticatorSelection: o.authenticatorSelection, attestation: o.attestation
      } }).then(function (c) {
        return { id: c.id, rawId: text(c.rawId), type: c.type, clientExtensionResults: {},
          response: { clientDataJSON: text(c.response.clientDataJSON), attestationObject: text(c.response.attestationObject) } };
      });
    }
    return navigator.credentials.get({ publicKey: {
      challenge: bytes(o.challenge), rpId: o.rpId, timeout: o.timeout, userVerification: o.userVerification,
      allowCredentials: descriptors(o.allowCredentials)
    } }).then(function (c) {
      return { id: c.id, rawId: text(c.rawId), type: c.type, clientExtensionResults: {},
        response: { clientDataJSON: text(c.response.clientDataJSON), authenticatorData: text(c.response.authenticatorData),
          signature: text(c.response.signature), userHandle: c.response.userHandle ? text(c.response.userHandle) : null } };
    });
  }
  if (start) {
    start.addEventListener("submit", function (event) {
      if (!window.PublicKeyCredential || !window.fetch || !window.DOMParser) return;
      event.preventDefault();
      say("waiting", "Waiting for your passkey…");
      var button = start.querySelector("button");
      button.disabled = true;
      var step;
      fetch(start.action, { method: "POST", credentials: "same-origin", body: new URLSearchParams(new FormData(start)) })
        .then(function (response) { return response.text(); })
        .then(function (html) {
          step = new DOMParser().parseFromString(html, "text/html");
          var options = step.getElementById("passkey");
          if (!options || !step.getElementById("passkey-form")) throw { name: "NoOptions" };
          return ceremony(options);
        })
        .then(function (answer) {
          var finish = step.getElementById("passkey-form");
          start.action = finish.getAttribute("action");
          var field = document.createElement("input");
          field.type = "hidden";
          field.name = "credential";
          field.value = JSON.stringify(answer);
          start.appendChild(field);
          start.submit();
        }, function (error) {
          button.disabled = false;
          if (error && error.name === "NoOptions") { start.submit(); return; }
          say("failed", "The passkey was not used ({name}). Try again, or sign in another way below.", error && error.name);
        });
    });
  }
  if (!box) return;
  form.addEventListener("submit", function (event) {
    if (form.elements.credential.value) return;
    event.preventDefault();
    if (!window.PublicKeyCredential) { say("unsupported", "This browser cannot use passkeys."); return; }
    say("waiting", "Waiting for your passkey…");
    ceremony(box).then(function (answer) {
      form.elements.credential.value = JSON.stringify(answer);
      form.submit();
    }, function (error) {
      say("failed", "The passkey was not used ({name}). Try again, or choose another way.", error.name);
    });
  });
})();
