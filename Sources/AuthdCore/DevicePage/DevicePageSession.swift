import AuthKernel
import AuthStorage
import Foundation

/// The `/device` page's own short session (contract §7): a cookie, of which the store keeps only a
/// hash, holding the step the person is at. It is not an authd session: it can approve the one
/// device code it was opened for, nothing else, and lives at most ten minutes.
///
/// Until its first valid POST a session is stored nowhere (contract §12): the cookie itself is the
/// sealed CSRF token and expiry, so visitors who only look cost no write and no memory.
struct DevicePageSession: Sendable {
    static let purpose = "device_page"
    static let lifetime = 600
    /// `__Host-`: only this host, path `/`, `Secure`; never sent to another site's requests.
    static let cookieName = "__Host-authd-device"

    /// The cookie's value (sent to the browser, never stored).
    var cookie: String
    /// The token every form carries.
    var csrf: String
    /// `start`, `code`, `factor` or `confirm`.
    var step: String
    var email: String?
    var userCode: String?
    var userID: UUID?
    /// At `factor`: the second factors the page offers (its challenge's token is derived from the cookie).
    var factors: [String] = []
    var expiresAt: Date

    /// A new session, not stored: its cookie seals its CSRF token and expiry (and 16 random bytes, so
    /// no two cookies are alike whatever the clock says).
    static func new(now: Date, box: SecretBox) -> DevicePageSession {
        let csrf = Base64URL.encode(SecureRandom.bytes(32))
        let expiresAt = now.addingTimeInterval(TimeInterval(lifetime))
        let cookie = box.seal("\(Base64URL.encode(SecureRandom.bytes(16)))|\(csrf)|\(Int(expiresAt.timeIntervalSince1970))")
        return DevicePageSession(cookie: cookie, csrf: csrf, step: "start", expiresAt: expiresAt)
    }

    /// The session a sealed cookie of ``new(now:box:)`` stands for, until it has been stored; nil
    /// when the cookie was not sealed by this server or has expired.
    static func unsealed(_ cookie: String, box: SecretBox, now: Date) -> DevicePageSession? {
        guard let plain = box.open(cookie) else { return nil }
        let parts = plain.split(separator: "|")
        guard parts.count == 3, let seconds = Int(parts[2]) else { return nil }
        let expiresAt = Date(timeIntervalSince1970: TimeInterval(seconds))
        guard expiresAt > now else { return nil }
        return DevicePageSession(cookie: cookie, csrf: String(parts[1]), step: "start", expiresAt: expiresAt)
    }

    /// The longest cookie accepted: a sealed one is about 170 characters.
    static let maxCookieLength = 256

    static func key(_ cookie: String) -> String { Hex.encode(SHA256.hash(cookie)) }

    /// The token of this page's sign-in challenge: derived from the cookie, so stored nowhere.
    var challengeToken: String { Base64URL.encode(SHA256.hmac(key: Array(cookie.utf8), message: Array("device-page-challenge".utf8))) }

    var record: CodeRecord {
        var payload: [String: JSONValue] = ["csrf": .string(csrf), "step": .string(step)]
        if let email { payload["email"] = .string(email) }
        if let userCode { payload["user_code"] = .string(userCode) }
        if let userID { payload["user_id"] = .string(userID.lowercased) }
        if !factors.isEmpty { payload["factors"] = .array(factors.map(JSONValue.string)) }
        return CodeRecord(purpose: Self.purpose, key: Self.key(cookie), digest: "", sentAt: expiresAt.addingTimeInterval(-TimeInterval(Self.lifetime)), expiresAt: expiresAt, payload: payload)
    }

    init(cookie: String, csrf: String, step: String, email: String? = nil, userCode: String? = nil, userID: UUID? = nil, expiresAt: Date) {
        (self.cookie, self.csrf, self.step, self.email, self.userCode, self.userID, self.expiresAt) = (cookie, csrf, step, email, userCode, userID, expiresAt)
    }

    init?(cookie: String, record: CodeRecord) {
        func string(_ key: String) -> String? { if case .string(let s) = record.payload?[key] { s } else { nil } }
        guard let csrf = string("csrf"), let step = string("step") else { return nil }
        self.init(
            cookie: cookie, csrf: csrf, step: step, email: string("email"), userCode: string("user_code"),
            userID: string("user_id").flatMap(UUID.init(uuidString:)), expiresAt: record.expiresAt)
        if case .array(let items) = record.payload?["factors"] { factors = items.compactMap { if case .string(let f) = $0 { f } else { nil } } }
    }
}
