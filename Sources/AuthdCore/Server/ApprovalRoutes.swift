package import AuthKernel
import AuthStorage
import Foundation
package import Hummingbird
import NIOCore
import HTTPTypes
import ServiceLifecycle

/// The approvals endpoints (contract §3): list, approve with the match code, deny, and a
/// Server-Sent Events stream of new requests for headless devices.
package struct ApprovalRoutes: Sendable {
    let kernel: Kernel
    /// Seconds between keep-alive comments on the event stream.
    let keepAlive: Duration
    /// Longest an event stream stays open; clients reconnect.
    let maxStreamDuration: Duration

    /// Creates the routes.
    package init(kernel: Kernel, keepAlive: Duration = .seconds(15), maxStreamDuration: Duration = .seconds(1800)) {
        self.kernel = kernel
        self.keepAlive = keepAlive
        self.maxStreamDuration = maxStreamDuration
    }

    /// A pending request as listed: never the match code, never the payload.
    struct Item: Codable {
        var id: String
        var kind: String
        var createdAt: String
        var expiresAt: String
        var deviceName: String?
        var platform: String?
        /// The requester's network (contract §15), so the person can tell their own laptop from elsewhere.
        var network: String?
        enum CodingKeys: String, CodingKey {
            case id, kind, createdAt = "created_at", expiresAt = "expires_at", deviceName = "device_name", platform, network
        }

        init(_ a: ApprovalRecord) {
            id = a.id
            kind = a.kind
            createdAt = Timestamp.string(a.createdAt)
            expiresAt = Timestamp.string(a.expiresAt)
            deviceName = a.deviceName
            platform = a.platform
            network = a.network
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(kind, forKey: .kind)
            try c.encode(createdAt, forKey: .createdAt)
            try c.encode(expiresAt, forKey: .expiresAt)
            try c.encode(deviceName, forKey: .deviceName)
            try c.encode(platform, forKey: .platform)
            try c.encode(network, forKey: .network)
        }
    }
    struct List: ResponseEncodable { var approvals: [Item] }
    struct ApproveBody: Decodable {
        var matchCode: String
        /// The approving session's own refresh token: the proof of contract §12 when the session is not fresh.
        var refreshToken: String?
        enum CodingKeys: String, CodingKey { case matchCode = "match_code", refreshToken = "refresh_token" }
    }

    struct DenyBody: Decodable {
        /// `not_me`: the person did not ask for this (contract §15); the kind decides what that does.
        var reason: String?
        /// The proof of contract §12 that `not_me` needs (it blocks a network and mails the owner).
        var refreshToken: String?
        enum CodingKeys: String, CodingKey { case reason, refreshToken = "refresh_token" }
    }

    enum StreamEvent: Sendable {
        case approval(ApprovalRecord)
        case keepAlive
        case end
    }

    /// Adds the routes to the `/api/v1/auth` group.
    package func add(to api: RouterGroup<AuthRequestContext>) {
        let kernel = self.kernel
        api.get("approvals") { _, context -> List in
            let principal = try context.requirePrincipal()
            return List(approvals: try await kernel.approvals.pending(userID: principal.user.id).map(Item.init))
        }
        api.post("approvals/{id}/approve") { request, context -> Response in
            let principal = try context.requirePrincipal()
            let body = try await request.decodeJSON(as: ApproveBody.self, context: context)
            try await kernel.sessions.requireApprovalProof(principal, refreshToken: body.refreshToken)
            try await Self.approve(try context.parameters.require("id"), matchCode: body.matchCode, by: principal, kernel: kernel)
            return Response(status: .noContent)
        }
        api.post("approvals/{id}/deny") { request, context -> Response in
            let principal = try context.requirePrincipal()
            // A body is optional: nothing, `{}`, or a reason.
            let body = try await request.decodeJSONIfPresent(as: DenyBody.self, context: context)
            let reason = body?.reason
            guard reason == nil || reason == "not_me" else { throw AuthError.invalidRequest("`reason` is `not_me` or absent.", field: "reason") }
            // "Not me" blocks a network and mails the owner: a leaked access token alone must not (§12).
            if reason != nil { try await kernel.sessions.requireApprovalProof(principal, refreshToken: body?.refreshToken) }
            try await Self.deny(try context.parameters.require("id"), reason: reason, by: principal, kernel: kernel)
            return Response(status: .noContent)
        }
        api.get("approvals/stream") { _, context -> Response in
            let principal = try context.requirePrincipal()
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-cache", HTTPField.Name("X-Accel-Buffering")!: "no"],
                body: try eventStream(for: principal.user.id, session: principal.session.id)
            )
        }
    }

    /// Approves the request `id` with the number its device shows, audited; the proof of contract
    /// §12 is the caller's to check first (the API's refresh token, the account page's cookie).
    static func approve(_ id: String, matchCode: String, by principal: Principal, kernel: Kernel) async throws {
        let kind = try await kernel.approvals.pending(userID: principal.user.id).first { $0.id == id }?.kind
        do {
            try await kernel.approvals.approve(id: id, userID: principal.user.id, matchCode: matchCode, by: principal.session)
        } catch let error as AuthError where error.code == "INVALID_CODE" {
            if case .number(0)? = error.details?["attempts_remaining"] {
                await kernel.audit.record(
                    kernel.approvals.auditEvent(kind: kind, outcome: "denied"), user: principal.user.id, device: principal.session.deviceName,
                    reason: "wrong_match_code")
            }
            throw error
        }
        await kernel.audit.record(kernel.approvals.auditEvent(kind: kind, outcome: "approved"), user: principal.user.id, device: principal.session.deviceName, reason: kind)
    }

    /// Denies the request `id` (`reason` `not_me`: the kind's effects of contract §15), audited.
    static func deny(_ id: String, reason: String?, by principal: Principal, kernel: Kernel) async throws {
        let kind = try await kernel.approvals.pending(userID: principal.user.id).first { $0.id == id }?.kind
        try await kernel.approvals.deny(id: id, userID: principal.user.id, reason: reason)
        await kernel.audit.record(
            kernel.approvals.auditEvent(kind: kind, outcome: "denied"), user: principal.user.id, device: principal.session.deviceName, reason: reason ?? kind)
    }

    /// `event: approval` with the listed shape for each new request; `: keep-alive` comments between.
    /// The session is checked again before each event: once it has ended (logout, revocation, a
    /// password reset) the stream closes instead of writing.
    func eventStream(for userID: UUID, session sessionID: UUID) throws(AuthError) -> ResponseBody {
        let approvals = try kernel.approvals.subscribe(userID: userID)
        let keepAlive = self.keepAlive, maxDuration = self.maxStreamDuration
        let sessions = kernel.sessions
        return ResponseBody { writer in
            let (events, feed) = AsyncStream.makeStream(of: StreamEvent.self)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await approval in approvals { feed.yield(.approval(approval)) }
                    feed.yield(.end)
                }
                group.addTask {
                    let deadline = ContinuousClock.now + maxDuration
                    while ContinuousClock.now < deadline {
                        try await Task.sleep(for: keepAlive)
                        feed.yield(.keepAlive)
                    }
                    feed.yield(.end)
                }
                try await writer.write(ByteBuffer(string: "retry: 5000\n: connected\n\n"))
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                loop: for await event in events.cancelOnGracefulShutdown() {
                    if case .end = event { break loop }
                    guard await sessions.isLive(sessionID, of: userID) else { break loop }
                    switch event {
                    case .approval(let approval):
                        let data = String(decoding: try encoder.encode(Item(approval)), as: UTF8.self)
                        try await writer.write(ByteBuffer(string: "event: approval\nid: \(approval.id)\ndata: \(data)\n\n"))
                    case .keepAlive:
                        try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                    case .end:
                        break loop
                    }
                }
                group.cancelAll()
                feed.finish()
            }
            try await writer.finish(nil)
        }
    }
}
