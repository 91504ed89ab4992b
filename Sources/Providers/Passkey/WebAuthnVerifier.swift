import AuthKernel

/// The checks of WebAuthn Level 3's registration (§7.1) and authentication (§7.2) ceremonies that
/// do not need the store: client data type and origin, the RP ID hash, the user-present and
/// user-verified flags, the attestation (`none`, or `packed` self attestation), the assertion's
/// signature and sign counter. The challenge is checked (and used up) by the caller.
struct WebAuthnVerifier: Sendable {
    let rpID: String
    let origins: [String]
    /// Always true in the provider (the contract requires user verification); false only to check
    /// the published test vectors, most of which were made without it.
    var requireUserVerification = true

    static let maxAttestationLength = 32 * 1024
    static let maxAuthenticatorDataLength = 8 * 1024

    /// A verified registration.
    struct Registration: Sendable {
        let clientData: ClientData
        let credentialID: [UInt8]
        let publicKey: COSEKey
        let flags: AuthenticatorData.Flags
        let signCount: UInt32
    }

    /// A verified assertion.
    struct Assertion: Sendable {
        let clientData: ClientData
        let flags: AuthenticatorData.Flags
        let signCount: UInt32
    }

    func checkClientData(_ bytes: [UInt8], type: String) throws -> ClientData {
        let clientData = try ClientData.parse(bytes)
        guard clientData.type == type else { throw WebAuthnError("clientDataJSON.type is \(LogSafe.text(clientData.type, maxLength: 32)), not \(type)") }
        guard origins.contains(clientData.origin) || (rpID == "localhost" && PasskeySettings.isLocalhost(clientData.origin)) else { throw WebAuthnError("the origin \(LogSafe.text(clientData.origin, maxLength: 100)) is not in passkeys.origins") }
        guard clientData.crossOrigin != true, clientData.topOrigin == nil else { throw WebAuthnError("a cross-origin ceremony is not accepted") }
        return clientData
    }

    func checkAuthenticatorData(_ data: AuthenticatorData) throws {
        guard ConstantTime.equals(data.rpIDHash, SHA256.hash(Array(rpID.utf8))) else { throw WebAuthnError("the RP ID hash is not that of \(rpID)") }
        guard data.flags.contains(.userPresent) else { throw WebAuthnError("the user-present flag is not set") }
        guard data.flags.contains(.userVerified) || !requireUserVerification else { throw WebAuthnError("the user-verified flag is not set (user verification is required)") }
        guard data.flags.contains(.backupEligible) || !data.flags.contains(.backedUp) else { throw WebAuthnError("backed up but not backup-eligible") }
    }

    /// Checks a registration response's `clientDataJSON` and `attestationObject`.
    func verifyRegistration(clientDataJSON: [UInt8], attestationObject: [UInt8], rawID: [UInt8]) throws -> Registration {
        let clientData = try checkClientData(clientDataJSON, type: "webauthn.create")
        guard attestationObject.count <= Self.maxAttestationLength else { throw WebAuthnError("the attestation object is too large") }
        let attestation: CBOR
        do { attestation = try CBORDecoder.decode(attestationObject) } catch { throw WebAuthnError("the attestation object is not CBOR: \(error)") }
        guard let format = attestation[text: "fmt"]?.text, let statement = attestation[text: "attStmt"], case .map(let fields) = statement,
            let authDataBytes = attestation[text: "authData"]?.bytes
        else { throw WebAuthnError("the attestation object lacks fmt, attStmt or authData") }
        let authData = try AuthenticatorData(authDataBytes)
        try checkAuthenticatorData(authData)
        guard let credential = authData.credential else { throw WebAuthnError("the authenticator data holds no credential") }
        guard ConstantTime.equals(credential.id, rawID) else { throw WebAuthnError("the credential id differs from rawId") }
        switch format {
        case "none":
            guard fields.isEmpty else { throw WebAuthnError("attestation none with a statement") }
        case "packed":
            // Self attestation only: signed by the credential's own key. A certificate chain (full
            // attestation) would need trust anchors this server does not keep; options ask for none.
            guard statement[text: "x5c"] == nil else { throw WebAuthnError("packed attestation with a certificate chain is not accepted") }
            guard let alg = statement[text: "alg"]?.int, alg == credential.publicKey.algorithm.rawValue, let signature = statement[text: "sig"]?.bytes else {
                throw WebAuthnError("packed self attestation needs the credential's alg and a sig")
            }
            guard credential.publicKey.verify(signature: signature, message: authDataBytes + SHA256.hash(clientDataJSON)) else {
                throw WebAuthnError("the packed self attestation's signature does not verify")
            }
        default:
            throw WebAuthnError("attestation format \(LogSafe.text(format, maxLength: 32)) is not accepted (none or packed self attestation)")
        }
        return Registration(clientData: clientData, credentialID: credential.id, publicKey: credential.publicKey, flags: authData.flags, signCount: authData.signCount)
    }

    /// Checks an assertion against the stored credential: signature over authenticator data ‖
    /// SHA-256(clientDataJSON), and a sign counter that moved on (unless both are zero).
    func verifyAssertion(clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], key: COSEKey, storedSignCount: UInt32) throws -> Assertion {
        let clientData = try checkClientData(clientDataJSON, type: "webauthn.get")
        guard authenticatorData.count <= Self.maxAuthenticatorDataLength, signature.count <= 256 else { throw WebAuthnError("the assertion is too large") }
        let authData = try AuthenticatorData(authenticatorData)
        try checkAuthenticatorData(authData)
        guard authData.credential == nil else { throw WebAuthnError("an assertion carries no new credential") }
        guard key.verify(signature: signature, message: authenticatorData + SHA256.hash(clientDataJSON)) else {
            throw WebAuthnError("the assertion's signature does not verify")
        }
        if storedSignCount != 0 || authData.signCount != 0 {
            guard authData.signCount > storedSignCount else {
                throw WebAuthnError("the sign counter went from \(storedSignCount) to \(authData.signCount): the authenticator may have been cloned")
            }
        }
        return Assertion(clientData: clientData, flags: authData.flags, signCount: authData.signCount)
    }
}
