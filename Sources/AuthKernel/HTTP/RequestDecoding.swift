import AuthStorage
import Foundation
public import Hummingbird
import NIOCore

extension Request {
    /// Decodes the JSON body, mapping every failure to the contract: 413 over 64 KiB, otherwise
    /// 400 `INVALID_REQUEST` with a message naming the field that is missing or has the wrong type.
    /// Unknown fields are ignored.
    public func decodeJSON<T: Decodable>(as type: T.Type, context: AuthRequestContext) async throws -> T {
        var buffer: ByteBuffer
        do {
            buffer = try await body.collect(upTo: context.maxUploadSize)
        } catch is NIOTooManyBytesError {
            throw AuthError.payloadTooLarge
        }
        guard buffer.readableBytes > 0 else { throw AuthError.invalidRequest("The request body must be a JSON object.") }
        try Self.checkContentType(headers[.contentType])
        // Contract §5: `deviceName` is `device_name`; rewritten once here so no body type needs both.
        if let renamed = try buffer.withUnsafeReadableBytes({ try CamelCaseKeys.normalise($0) }) {
            buffer = ByteBuffer(bytes: renamed)
        }
        if let flatType = T.self as? any FlatJSONDecodable.Type, let flat = FlatJSONObject(buffer.readableBytesView),
            let value = flatType.init(flat: flat) as? T
        {
            return value
        }
        do {
            let value = try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
            if let key = JSONDuplicateKeys.first(in: buffer.readableBytesView) {
                throw AuthError.invalidRequest("The field `\(key)` appears more than once.", field: key)
            }
            return value
        } catch let error as AuthError {
            throw error
        } catch DecodingError.keyNotFound(let key, let ctx) {
            let field = Self.path(ctx.codingPath + [key])
            throw AuthError.invalidRequest("The field `\(field)` is required.", field: field)
        } catch DecodingError.valueNotFound(_, let ctx) {
            let field = Self.path(ctx.codingPath)
            throw AuthError.invalidRequest("The field `\(field)` must not be null.", field: field)
        } catch DecodingError.typeMismatch(let type, let ctx) {
            let field = Self.path(ctx.codingPath)
            if field.isEmpty { throw AuthError.invalidRequest("The request body must be a JSON object.") }
            throw AuthError.invalidRequest("The field `\(field)` must be \(Self.describe(type)).", field: field)
        } catch DecodingError.dataCorrupted(let ctx) where !ctx.codingPath.isEmpty {
            let field = Self.path(ctx.codingPath)
            throw AuthError.invalidRequest("The field `\(field)` has an invalid value.", field: field)
        } catch {
            throw AuthError.invalidRequest("The request body is not valid JSON.")
        }
    }

    /// Like ``decodeJSON(as:context:)``, but an empty body is allowed and gives nil (for endpoints whose
    /// fields are all optional, such as anonymous sign-in).
    public func decodeJSONIfPresent<T: Decodable>(as type: T.Type, context: AuthRequestContext) async throws -> T? {
        let buffer: ByteBuffer
        do {
            buffer = try await body.collect(upTo: context.maxUploadSize)
        } catch is NIOTooManyBytesError {
            throw AuthError.payloadTooLarge
        }
        if buffer.readableBytesView.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return nil }
        var copy = self
        copy.body = .init(buffer: buffer)
        return try await copy.decodeJSON(as: type, context: context)
    }

    /// A body must be JSON: no Content-Type (some device HTTP stacks send none), `application/json`
    /// or `application/…+json`. Anything else, e.g. a form that a browser may post cross-site without
    /// asking, is 415.
    static func checkContentType(_ value: String?) throws(AuthError) {
        guard let value else { return }
        // The usual header, checked without splitting, trimming and lowercasing (Foundation's
        // trimming showed in the refresh profile).
        if value == "application/json" || value == "application/json; charset=utf-8" { return }
        let type = value.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json")) else {
            throw AuthError(
                status: .unsupportedMediaType, code: "INVALID_REQUEST",
                message: "Send the body as JSON with `Content-Type: application/json`, not `\(type)`."
            )
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Double.Type: "a number"
        default: "an object or array of the documented shape"
        }
    }
}
