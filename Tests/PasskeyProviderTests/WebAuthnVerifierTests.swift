@testable import PasskeyProvider
import AuthKernel
import Foundation
import Testing

/// The ceremonies' checks against WebAuthn's published test vectors, and against each forgery
/// made from them.
struct WebAuthnVerifierTests {
    static let bytes = CBORTests.bytes
    static let lenient = WebAuthnVerifier(rpID: "example.org", origins: ["https://example.org"], requireUserVerification: false)

    func register(_ v: WebAuthnTestVectors.Ceremony, with verifier: WebAuthnVerifier = lenient) throws -> WebAuthnVerifier.Registration {
        try verifier.verifyRegistration(
            clientDataJSON: Self.bytes(v.registrationClientData), attestationObject: Self.bytes(v.attestationObject), rawID: Self.bytes(v.credentialID))
    }

    func assert(_ v: WebAuthnTestVectors.Ceremony, key: COSEKey, with verifier: WebAuthnVerifier = lenient, stored: UInt32 = 0,
                authenticatorData: [UInt8]? = nil, signature: [UInt8]? = nil, clientData: [UInt8]? = nil) throws -> WebAuthnVerifier.Assertion {
        try verifier.verifyAssertion(
            clientDataJSON: clientData ?? Self.bytes(v.authenticationClientData), authenticatorData: authenticatorData ?? Self.bytes(v.authenticatorData),
            signature: signature ?? Self.bytes(v.signature), key: key, storedSignCount: stored)
    }

    @Test(arguments: [("none", WebAuthnTestVectors.noneES256), ("packed self", WebAuthnTestVectors.packedSelfES256), ("long id", WebAuthnTestVectors.longCredentialID)])
    func publishedCeremoniesVerify(name: String, vector: WebAuthnTestVectors.Ceremony) throws {
        let registration = try register(vector)
        #expect(registration.credentialID == Self.bytes(vector.credentialID), "\(name)")
        #expect(registration.publicKey.algorithm == .es256)
        #expect(registration.clientData.challenge == Base64URL.encode(Self.bytes(vector.registrationChallenge)))
        let assertion = try assert(vector, key: registration.publicKey)
        #expect(assertion.clientData.challenge == Base64URL.encode(Self.bytes(vector.authenticationChallenge)))
    }

    @Test func anEd25519AssertionVerifiesButFullAttestationIsNotAccepted() throws {
        let vector = WebAuthnTestVectors.packedEd25519
        #expect(throws: WebAuthnError("packed attestation with a certificate chain is not accepted")) { try register(vector) }
        let attestation = try CBORDecoder.decode(Self.bytes(vector.attestationObject))
        let authData = try #require(attestation[text: "authData"]?.bytes)
        let key = try #require(try AuthenticatorData(authData).credential?.publicKey)
        #expect(key.algorithm == .edDSA && key.key.count == 32)
        _ = try assert(vector, key: key)
        var forged = Self.bytes(vector.signature)
        forged[10] ^= 1
        #expect(throws: WebAuthnError.self) { try assert(vector, key: key, signature: forged) }
    }

    @Test func crossOriginAndTopOriginCeremoniesAreRefused() {
        #expect(throws: WebAuthnError("a cross-origin ceremony is not accepted")) { try register(WebAuthnTestVectors.crossOrigin) }
        #expect(throws: WebAuthnError("a cross-origin ceremony is not accepted")) { try register(WebAuthnTestVectors.topOrigin) }
    }

    @Test func forgeriesAreRefused() throws {
        let vector = WebAuthnTestVectors.packedSelfES256
        let key = try register(vector).publicKey
        // Another RP, another origin.
        let otherRP = WebAuthnVerifier(rpID: "example.com", origins: ["https://example.org"], requireUserVerification: false)
        #expect(throws: WebAuthnError("the RP ID hash is not that of example.com")) { try register(vector, with: otherRP) }
        #expect(throws: WebAuthnError.self) { try assert(vector, key: key, with: otherRP) }
        let otherOrigin = WebAuthnVerifier(rpID: "example.org", origins: ["https://app.example.org"], requireUserVerification: false)
        #expect(throws: WebAuthnError("the origin https://example.org is not in passkeys.origins")) { try register(vector, with: otherOrigin) }
        // User verification: the registration had it, the published assertion did not.
        let strict = WebAuthnVerifier(rpID: "example.org", origins: ["https://example.org"])
        _ = try register(vector, with: strict)
        #expect(throws: WebAuthnError("the user-verified flag is not set (user verification is required)")) { try assert(vector, key: key, with: strict) }
        #expect(throws: WebAuthnError.self) { try register(WebAuthnTestVectors.noneES256, with: strict) }
        // A counter that does not move on.
        #expect(throws: WebAuthnError("the sign counter went from 5 to 0: the authenticator may have been cloned")) { try assert(vector, key: key, stored: 5) }
        // Flags flipped after signing (UV set by an attacker): the signature no longer verifies.
        var data = Self.bytes(vector.authenticatorData)
        data[32] |= 0x04
        #expect(throws: WebAuthnError("the assertion's signature does not verify")) { try assert(vector, key: key, with: strict, authenticatorData: data) }
        // An assertion presented as a registration, and the reverse.
        #expect(throws: WebAuthnError.self) {
            try Self.lenient.verifyRegistration(clientDataJSON: Self.bytes(vector.authenticationClientData), attestationObject: Self.bytes(vector.attestationObject), rawID: Self.bytes(vector.credentialID))
        }
        #expect(throws: WebAuthnError.self) { try assert(vector, key: key, clientData: Self.bytes(vector.registrationClientData)) }
        // rawId that is not the attested credential's.
        #expect(throws: WebAuthnError("the credential id differs from rawId")) {
            try Self.lenient.verifyRegistration(clientDataJSON: Self.bytes(vector.registrationClientData), attestationObject: Self.bytes(vector.attestationObject), rawID: [1, 2, 3])
        }
        // A self attestation signed over other data.
        var attestation = Self.bytes(vector.attestationObject)
        let sigAt = try #require(attestation.firstRange(of: Array("sig".utf8))).upperBound + 3
        attestation[sigAt + 10] ^= 1
        #expect(throws: WebAuthnError.self) {
            try Self.lenient.verifyRegistration(clientDataJSON: Self.bytes(vector.registrationClientData), attestationObject: attestation, rawID: Self.bytes(vector.credentialID))
        }
    }
}
