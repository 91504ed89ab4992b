import AuthKernel
import Foundation
import Hummingbird
import NIOCore

/// The parameters of an `/oauth` request: `application/x-www-form-urlencoded` as OAuth sends them,
/// or a JSON object of strings (contract §7). A parameter the endpoint reads given twice is refused
/// (RFC 6749 §3.2); one it does not read is ignored however it is sent (§3.1).
struct OAuthParameters: Sendable {
    private var values: [String: String]

    /// What `/oauth/token` reads for the grant named: a parameter of another grant is not this
    /// request's business, however it is sent.
    static func token(grant: String?) -> Set<String> {
        switch grant {
        case OAuthRoutes.deviceCodeGrant?: ["grant_type", "device_code", "client_id"]
        case "refresh_token"?: ["grant_type", "refresh_token", "client_id", "client_secret", "scope"]
        case "authorization_code"?: ["grant_type", "code", "redirect_uri", "code_verifier", "client_id", "client_secret"]
        default: ["grant_type"]
        }
    }
    /// What `/oauth/device_authorization` reads.
    static let deviceAuthorization: Set<String> = ["client_id", "device_name", "platform", "scope"]
    /// What `/oauth/revoke` and `/oauth/introspect` read.
    static let tokenQuery: Set<String> = ["token", "token_type_hint", "client_id", "client_secret"]

    subscript(_ name: String) -> String? { values[name].flatMap { $0.isEmpty ? nil : $0 } }

    static func read(_ request: Request, context: AuthRequestContext, reading known: Set<String>) async throws -> OAuthParameters {
        try await read(request, context: context, reading: { _ in known })
    }

    /// The parameters `reading` names for the request's `grant_type` (the first one sent).
    static func read(_ request: Request, context: AuthRequestContext, reading: (String?) -> Set<String>) async throws -> OAuthParameters {
        let type = request.headers[.contentType]?.lowercased() ?? ""
        let bytes: [UInt8]
        do {
            bytes = Array(try await request.body.collect(upTo: context.maxUploadSize).readableBytesView)
        } catch is NIOTooManyBytesError {
            throw OAuthError("invalid_request", "The body is over 64 KiB.", status: .contentTooLarge)
        }
        if type.hasPrefix("application/json") {
            guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(bytes)) else {
                throw OAuthError("invalid_request", "The body is not a JSON object.")
            }
            let known = reading(object["grant_type"].flatMap { if case .string(let s) = $0 { s } else { nil } })
            if let key = JSONDuplicateKeys.first(in: bytes[...]), known.contains(key) {
                throw OAuthError("invalid_request", "The parameter `\(key)` is given twice.")
            }
            var values: [String: String] = [:]
            // Parameters authd reads must be strings; others are ignored, as in a form.
            for (key, value) in object where known.contains(key) {
                switch value {
                case .string(let s): values[key] = s
                case .null: continue
                default: throw OAuthError("invalid_request", "The parameter `\(key)` must be a string.")
                }
            }
            return OAuthParameters(values: values)
        }
        guard type.isEmpty || type.hasPrefix("application/x-www-form-urlencoded") else {
            throw OAuthError("invalid_request", "Send application/x-www-form-urlencoded or application/json.", status: .unsupportedMediaType)
        }
        return try OAuthParameters(form: bytes, reading: reading)
    }

    init(values: [String: String]) { self.values = values }

    /// A form whose every field is kept (the `/device` page's own forms).
    init(form bytes: [UInt8], keeping names: Set<String>) throws {
        self.init(values: [:])
        for pair in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]), names.contains(name), let value = Self.decode(parts.count > 1 ? parts[1] : []) else { continue }
            guard values[name] == nil else { throw OAuthError("invalid_request", "The field `\(name)` is given twice.") }
            values[name] = value
        }
    }

    init(form bytes: [UInt8], reading: (String?) -> Set<String>) throws {
        values = [:]
        let pairs = bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true)
        let grant = pairs.lazy.map { $0.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false) }
            .first { Self.decode($0[0]) == "grant_type" }.flatMap { $0.count > 1 ? Self.decode($0[1]) : nil }
        let known = reading(grant)
        for pair in pairs {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            // Parameters authd does not read are ignored, even repeated or badly encoded (RFC 6749 §3.1).
            guard let name = Self.decode(parts[0]), known.contains(name) else { continue }
            guard let value = Self.decode(parts.count > 1 ? parts[1] : []) else {
                throw OAuthError("invalid_request", "The parameter `\(name)` is not valid form encoding.")
            }
            guard values[name] == nil else { throw OAuthError("invalid_request", "The parameter `\(name)` is given twice.") }
            values[name] = value
        }
    }

    /// `+` is a space, `%XX` a byte; the result must be UTF-8.
    private static func decode(_ bytes: ArraySlice<UInt8>) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let b = bytes[i]
            if b == UInt8(ascii: "+") {
                out.append(0x20)
            } else if b == UInt8(ascii: "%") {
                guard i + 2 < bytes.endIndex, let hi = hex(bytes[i + 1]), let lo = hex(bytes[i + 2]) else { return nil }
                out.append(hi << 4 | lo)
                i += 2
            } else {
                out.append(b)
            }
            i += 1
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hex(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
