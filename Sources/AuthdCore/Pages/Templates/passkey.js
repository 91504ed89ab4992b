// authd's one script: the WebAuthn ceremony of a passkey form. The options come from the page's
// data-options; the answer goes back in the form's hidden `credential` field as WebAuthn's JSON.
(function () {
  "use strict";
  var box = document.getElementById("passkey");
  if (!box) return;
  var form = document.getElementById("passkey-form");
  var status = document.getElementById("passkey-status");
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
  function ceremony() {
    var o = JSON.parse(box.getAttribute("data-options"));
    if (box.getAttribute("data-mode") === "create") {
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
  form.addEventListener("submit", function (event) {
    if (form.elements.credential.value) return;
    event.preventDefault();
    if (!window.PublicKeyCredential) { status.textContent = "This browser cannot use passkeys."; return; }
    status.textContent = "Waiting for your passkey…";
    ceremony().then(function (answer) {
      form.elements.credential.value = JSON.stringify(answer);
      form.submit();
    }, function (error) {
      status.textContent = "The passkey was not used (" + error.name + "). Try again, or choose another way.";
    });
  });
})();
