public import AuthStorage
public import Foundation
package import Logging
import Synchronization

/// Requests that another signed-in device of the same user must approve, with a match code that the
/// person types on the approving device, so nobody approves a request they did not make.
///
/// Status moves pending → approved | denied | expired, approved → completed | expired, and never back.
/// Devices can subscribe to new requests for their user (Server-Sent Events use this).
public final class ApprovalService: Sendable {
    let store: any AuthStore
    let secret: [UInt8]
    let clock: any AuthClock
    let logger: Logger
    private let subscribers = Mutex<[UUID: [UUID: AsyncStream<ApprovalRecord>.Continuation]]>([:])
    private let auditNames = Mutex<[String: String]>([:])
    /// Other instances sharing the store, told about each new request; nil when alone.
    let cluster: (any ClusterEvents)?
    /// Where `approval.requested` and `approval.resolved` go (webhooks, push).
    let events: AccountEvents?

    /// Wrong match codes that deny a request.
    package static let maxMatchAttempts = 3

    /// Creates the service; `secret` keys the match-code hashes.
    package init(
        store: any AuthStore, secret: [UInt8], clock: any AuthClock, logger: Logger, cluster: (any ClusterEvents)? = nil, events: AccountEvents? = nil
    ) {
        self.events = events
        self.cluster = cluster
        self.store = store
        self.secret = secret
        self.clock = clock
        self.logger = logger
    }

    func digest(id: String, matchCode: String) -> [UInt8] {
        SHA256.hmac(key: secret, message: Array("approval\u{0}\(id)\u{0}\(matchCode)".utf8))
    }

    /// Creates a pending request and returns it with its match code (to show on the requesting device only).
    /// - Parameters:
    ///   - kind: what is asked, e.g. `password_reset` (the approving device is shown it).
    ///   - userID: whose devices approve; nil makes a decoy that behaves like a real request to the
    ///     requester (so a response never reveals whether an account exists) and simply expires.
    ///   - ttl: seconds until a pending request expires; an approved one then has as long again to complete.
    ///   - deviceName: the requesting device's name, shown to the approving one.
    ///   - payload: data kept with the request for whoever completes it.
    ///   - matchDigits: length of the match code.
    public func create(
        kind: String, userID: UUID?, ttl: Int, deviceName: String?, payload: [String: JSONValue], matchDigits: Int = 3
    ) async throws -> (approval: ApprovalRecord, matchCode: String) {
        let id = Base64URL.encode(SecureRandom.bytes(32))
        let matchCode = SecureRandom.digits(matchDigits)
        let now = clock.now()
        let approval = ApprovalRecord(
            id: id, kind: kind, userID: userID, matchCodeDigest: Hex.encode(digest(id: id, matchCode: matchCode)), matchAttempts: 0,
            state: .pending, createdAt: now, expiresAt: now.addingTimeInterval(TimeInterval(ttl)), completeBy: nil,
            deviceName: deviceName, payload: payload
        )
        try await store.write([]) { $0.put(approval) }
        if let userID {
            yield(approval, to: userID)
            await cluster?.publishApproval(id: id, userID: userID)
            logger.info("approval requested", metadata: ["user.id": "\(userID.lowercased)", "approval.kind": "\(kind)"])
            await events?.emit("approval.requested", Self.eventData(approval, userID: userID))
        }
        return (approval, matchCode)
    }

    /// An approval's event data: never the match code.
    static func eventData(_ approval: ApprovalRecord, userID: UUID) -> [String: JSONValue] {
        var data: [String: JSONValue] = [
            "user_id": .string(userID.lowercased), "approval_id": .string(approval.id), "kind": .string(approval.kind),
            "expires_at": .string(Timestamp.string(approval.expiresAt)),
        ]
        if let name = approval.deviceName { data["device_name"] = .string(name) }
        return data
    }

    private func yield(_ approval: ApprovalRecord, to userID: UUID) {
        let listeners = subscribers.withLock { Array(($0[userID] ?? [:]).values) }
        for listener in listeners { listener.yield(approval) }
    }

    /// Hands a request another instance created to this instance's subscribers of `userID`.
    package func deliver(id: String, userID: UUID) async {
        guard subscribers.withLock({ $0[userID] != nil }) else { return }
        guard let approval = try? await approval(id: id), approval.userID == userID else { return }
        yield(approval, to: userID)
    }

    /// Names the audit events of a kind of request: `PREFIX_approved` and `PREFIX_denied` (by
    /// default `approval_approved` and `approval_denied`).
    public func setAuditPrefix(_ prefix: String, for kind: String) {
        auditNames.withLock { $0[kind] = prefix }
    }

    /// The audit event for a request of `kind` being approved or denied (`outcome`).
    package func auditEvent(kind: String?, outcome: String) -> String {
        let prefix = kind.flatMap { kind in auditNames.withLock { $0[kind] } } ?? "approval"
        return "\(prefix)_\(outcome)"
    }

    /// The request with this id, if any.
    public func approval(id: String) async throws -> ApprovalRecord? {
        guard Self.isWellFormed(id) else { return nil }
        return try await store.read([.approval(id)]) { $0.approval(id: id) }
    }

    /// Whether `id` could be a request id (43 base64url characters, 256 bits): anything else from a
    /// path is refused before it reaches the store.
    static func isWellFormed(_ id: String) -> Bool {
        id.utf8.count == 43 && id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x5F }
    }

    /// Pending (unexpired) requests of a user, oldest first; optionally of one kind.
    public func pending(userID: UUID, kind: String? = nil) async throws -> [ApprovalRecord] {
        let now = clock.now()
        return try await store.read([.approvalsOfUser(userID)]) { state in
            state.approvals(userID: userID).filter { $0.status(at: now) == .pending && (kind == nil || $0.kind == kind) }
        }
    }

    /// Approves a pending request of `userID` if `matchCode` is right.
    /// - Throws: 404 `NOT_FOUND` (no such request for this user), 409 `INVALID_STATE` (not pending),
    ///   401 `INVALID_CODE` (wrong match code; the third wrong one denies the request).
    package func approve(id: String, userID: UUID, matchCode: String) async throws {
        guard Self.isWellFormed(id) else { throw AuthError.notFound("No such approval request.") }
        let now = clock.now()
        let presented = digest(id: id, matchCode: matchCode)
        let remaining = try await store.write([.approval(id)]) { state -> Int? in
            guard var approval = state.approval(id: id), approval.userID == userID else { throw AuthError.notFound("No such approval request.") }
            guard approval.status(at: now) == .pending else { throw AuthError.invalidState("This request is no longer pending.") }
            if ConstantTime.equals(presented, Hex.decode(approval.matchCodeDigest) ?? []) {
                approval.state = .approved
                approval.completeBy = now.addingTimeInterval(approval.expiresAt.timeIntervalSince(approval.createdAt))
                state.put(approval)
                return nil
            }
            approval.matchAttempts += 1
            if approval.matchAttempts >= Self.maxMatchAttempts { approval.state = .denied }
            state.put(approval)
            return max(0, Self.maxMatchAttempts - approval.matchAttempts)
        }
        if let remaining {
            logger.warning("wrong approval match code", metadata: ["user.id": "\(userID.lowercased)"])
            throw AuthError.wrongMatchCode(attemptsRemaining: remaining)
        }
        logger.info("approval granted", metadata: ["user.id": "\(userID.lowercased)"])
        await events?.emit("approval.resolved", ["user_id": .string(userID.lowercased), "approval_id": .string(id), "status": .string("approved")])
    }

    /// Denies a pending request of `userID`.
    /// - Throws: 404 `NOT_FOUND`, 409 `INVALID_STATE`.
    package func deny(id: String, userID: UUID) async throws {
        guard Self.isWellFormed(id) else { throw AuthError.notFound("No such approval request.") }
        let now = clock.now()
        try await store.write([.approval(id)]) { state in
            guard var approval = state.approval(id: id), approval.userID == userID else { throw AuthError.notFound("No such approval request.") }
            guard approval.status(at: now) == .pending else { throw AuthError.invalidState("This request is no longer pending.") }
            approval.state = .denied
            state.put(approval)
        }
        logger.info("approval denied", metadata: ["user.id": "\(userID.lowercased)"])
        await events?.emit("approval.resolved", ["user_id": .string(userID.lowercased), "approval_id": .string(id), "status": .string("denied")])
    }

    /// Marks an approved request of `kind` completed, once, and returns it with its payload.
    /// The provider applies the payload; if that fails the request stays completed (ask again).
    /// - Throws: 404 `NOT_FOUND`, 409 `INVALID_STATE` when it is not approved (pending, denied, expired, completed).
    public func complete(id: String, kind: String) async throws -> ApprovalRecord {
        guard Self.isWellFormed(id) else { throw AuthError.notFound("No such request.") }
        let now = clock.now()
        return try await store.write([.approval(id)]) { state in
            guard var approval = state.approval(id: id), approval.kind == kind else { throw AuthError.notFound("No such request.") }
            let status = approval.status(at: now)
            guard status == .approved, approval.userID != nil else {
                throw AuthError.invalidState("The request is \(status.rawValue), not approved.")
            }
            approval.state = .completed
            state.put(approval)
            return approval
        }
    }

    /// Streams one user may have open at once: enough for every device, not one per request a
    /// script can open.
    package static let maxSubscriptionsPerUser = 8

    /// New requests for `userID`, as they are created. The stream ends when the caller stops iterating.
    /// - Throws: 429 when the user has ``maxSubscriptionsPerUser`` open already.
    package func subscribe(userID: UUID) throws(AuthError) -> AsyncStream<ApprovalRecord> {
        let (stream, continuation) = AsyncStream.makeStream(of: ApprovalRecord.self, bufferingPolicy: .bufferingNewest(16))
        let token = SecureRandom.uuid()
        let added = subscribers.withLock { all -> Bool in
            guard (all[userID]?.count ?? 0) < Self.maxSubscriptionsPerUser else { return false }
            all[userID, default: [:]][token] = continuation
            return true
        }
        guard added else {
            continuation.finish()
            throw AuthError.rateLimited(retryAfter: 30, message: "Too many open event streams for this account. Close one first.")
        }
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLock { all in
                all[userID]?[token] = nil
                if all[userID]?.isEmpty == true { all[userID] = nil }
            }
        }
        return stream
    }

    /// Number of open subscriptions (for tests and metrics).
    package var subscriberCount: Int { subscribers.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    /// Deletes requests that ended more than `retention` seconds ago.
    @discardableResult
    package func purgeExpired(retention: Int = 86_400) async throws -> Int {
        let cutoff = clock.now().addingTimeInterval(-TimeInterval(retention))
        return try await store.write([.approvalsExpired(before: cutoff)]) { state in
            let old = state.approvals.values.filter { $0.currentExpiry < cutoff }
            for approval in old { state.deleteApproval(id: approval.id) }
            return old.count
        }
    }
}
