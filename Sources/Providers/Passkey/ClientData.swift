import Foundation

/// `clientDataJSON` (WebAuthn §5.8.1): what the browser or the OS says it asked the authenticator.
struct ClientData: Decodable, Sendable {
    let type: String
    /// base64url, as the options gave it.
    let challenge: String
    let origin: String
    let crossOrigin: Bool?
    let topOrigin: String?

    static let maxLength = 4096

    static func parse(_ bytes: [UInt8]) throws -> ClientData {
        guard bytes.count <= maxLength, let data = try? JSONDecoder().decode(ClientData.self, from: Data(bytes)) else {
            throw WebAuthnError("clientDataJSON is not the client data")
        }
        return data
    }
}
