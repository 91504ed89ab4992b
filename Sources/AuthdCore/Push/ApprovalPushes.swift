import AuthKernel
import AuthStorage
import Foundation
import Logging

/// Contract §9: an approval request pushes an alert to every full session of the user that
/// registered an APNs token, at most once a minute per user. The text is generic: never the email,
/// the match code or an address; the app fetches the request itself.
struct ApprovalPushes: Sendable {
    let apns: any PushDelivery
    let registrations: PushRegistrations
    let rateLimiter: RateLimiter
    let clock: any AuthClock
    let logger: Logger
    let defaultTopic: String
    /// Whether a kind of request may push now (a person who said "not me" quiets sign-in requests).
    let approvals: ApprovalService

    static let perUser = RateLimitRule(limit: 1, window: 60)

    func approvalRequested(_ data: [String: JSONValue]) async {
        guard case .string(let user)? = data["user_id"], let userID = UUID(uuidString: user), case .string(let approvalID)? = data["approval_id"],
            case .string(let kind)? = data["kind"]
        else { return }
        guard await approvals.pushes(kind: kind, userID: userID) else {
            logger.info("approval push skipped: the user quieted this kind of request", metadata: ["user.id": "\(user)", "approval.kind": "\(kind)"])
            return
        }
        guard let targets = try? await registrations.targets(of: userID), !targets.isEmpty else { return }
        // `attempt` answers the seconds to wait when the rule is spent, nil when this one may go.
        let wait = (try? await rateLimiter.attempt(Self.perUser, key: "push.approval:\(user)")) ?? nil
        guard wait == nil else {
            logger.info("approval push skipped: one was sent to this user less than a minute ago", metadata: ["user.id": "\(user)"])
            return
        }
        var expiration = clock.now().addingTimeInterval(60)
        if case .string(let text)? = data["expires_at"], let date = ISO8601DateFormatter().date(from: text) { expiration = date }
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        w.key("aps"); w.beginObject()
        w.key("alert"); w.beginObject()
        w.key("title"); w.string("Approve a request?")
        w.key("body"); w.string("Another device asks for your approval. Open the app to see it.")
        w.endObject()
        w.endObject()
        w.key("authd"); w.beginObject()
        w.key("approval_id"); w.string(approvalID)
        w.key("kind"); w.string(kind)
        w.endObject()
        w.endObject()
        let payload = w.bytes
        for target in targets {
            let outcome = await apns.send(
                deviceToken: target.token, environment: target.environment, topic: target.topic ?? defaultTopic, payload: payload,
                expiration: expiration, now: clock.now())
            switch outcome {
            case .sent:
                logger.info("approval pushed", metadata: ["user.id": "\(user)", "session.id": "\(target.sessionID)"])
            case .gone:
                logger.info("APNs token gone; forgotten", metadata: ["user.id": "\(user)", "session.id": "\(target.sessionID)"])
                try? await registrations.remove(userID: userID, token: target.token)
            case .failed(let why):
                logger.warning("approval push failed", metadata: ["user.id": "\(user)", "session.id": "\(target.sessionID)", "error": "\(why)"])
            }
        }
    }
}
