/// The authenticator data (WebAuthn §6.1): the RP ID's hash, the flags, the sign counter, and on
/// registration the new credential's id and public key.
struct AuthenticatorData: Sendable {
    struct Flags: OptionSet, Sendable {
        let rawValue: UInt8
        static let userPresent = Flags(rawValue: 0x01)
        static let userVerified = Flags(rawValue: 0x04)
        static let backupEligible = Flags(rawValue: 0x08)
        static let backedUp = Flags(rawValue: 0x10)
        static let attestedCredentialData = Flags(rawValue: 0x40)
        static let extensionData = Flags(rawValue: 0x80)
    }

    struct AttestedCredential: Sendable {
        let aaguid: [UInt8]
        let id: [UInt8]
        let publicKey: COSEKey
    }

    let rpIDHash: [UInt8]
    let flags: Flags
    let signCount: UInt32
    let credential: AttestedCredential?

    /// Longest credential id WebAuthn allows.
    static let maxCredentialIDLength = 1023

    init(_ bytes: [UInt8]) throws {
        guard bytes.count >= 37 else { throw WebAuthnError("the authenticator data is too short") }
        rpIDHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var offset = 37
        if flags.contains(.attestedCredentialData) {
            guard bytes.count >= offset + 18 else { throw WebAuthnError("the attested credential data is cut short") }
            let aaguid = Array(bytes[offset..<offset + 16])
            let length = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard length >= 16, length <= Self.maxCredentialIDLength, bytes.count >= offset + length else {
                throw WebAuthnError("the credential id has a bad length")
            }
            let id = Array(bytes[offset..<offset + length])
            offset += length
            var decoder = CBORDecoder(bytes, offset: offset)
            let key = try COSEKey(try decoder.next())
            offset = decoder.offset
            credential = AttestedCredential(aaguid: aaguid, id: id, publicKey: key)
        } else {
            credential = nil
        }
        if flags.contains(.extensionData) {
            var decoder = CBORDecoder(bytes, offset: offset)
            guard case .map = try decoder.next() else { throw WebAuthnError("the extension data is not a map") }
            offset = decoder.offset
        }
        guard offset == bytes.count else { throw WebAuthnError("the authenticator data has trailing bytes") }
    }
}
