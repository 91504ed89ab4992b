public import AuthStorage
public import Foundation
package import Logging
import HTTPTypes
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
    /// Where a new request's delivery is queued, in the request's own write; nil delivers at once.
    let jobs: JobQueue?
    private let kinds = Mutex<[String: ApprovalKindRules]>([:])
    /// The job that tells a new request's user (event stream, other instances, webhooks, push).
    static let deliveryJob = "approval.deliver"

    /// Wrong match codes that deny a request.
    package static let maxMatchAttempts = 3

    /// Creates the service; `secret` keys the match-code hashes.
    package init(
        store: any AuthStore, secret: [UInt8], clock: any AuthClock, logger: Logger, cluster: (any ClusterEvents)? = nil, events: AccountEvents? = nil,
        jobs: JobQueue? = nil
    ) {
        self.jobs = jobs
        self.events = events
        self.cluster = cluster
        self.store = store
        self.secret = secret
        self.clock = clock
        self.logger = logger
        jobs?.register(kind: Self.deliveryJob, policy: .init(maxAttempts: 3, baseDelay: 5)) { [weak self] job in
            guard let self, case .string(let id)? = job.payload["approval_id"] else { return }
            await self.deliverNew(id: id)
        }
    }

    /// Sets how requests of `kind` behave: the match-code tries, the audit events' names, whether
    /// the user's devices are pushed now, what a denial does.
    public func register(kind: String, _ rules: ApprovalKindRules) {
        kinds.withLock { $0[kind] = rules }
    }

    func rules(_ kind: String) -> ApprovalKindRules {
        kinds.withLock { $0[kind] } ?? ApprovalKindRules()
    }

    /// Whether an approval request of `kind` for `userID` may push an alert to the user's devices now.
    package func pushes(kind: String, userID: UUID) async -> Bool {
        guard let pushes = rules(kind).pushes else { return true }
        return await pushes(userID)
    }

    func digest(id: String, matchCode: String) -> [UInt8] {
        SHA256.hmac(key: secret, message: Array("approval\u{0}\(id)\u{0}\(matchCode)".utf8))
    }

    /// Creates a pending request and returns it with its match code (to show on the requesting device only).
    ///
    /// The request and its delivery to the user's devices are stored in one write, and delivered
    /// after it: a request for nobody (a decoy) does the same work, so the answer's timing says
    /// nothing about the account.
    /// - Parameters:
    ///   - kind: what is asked, e.g. `password_reset` (the approving device is shown it).
    ///   - userID: whose devices approve; nil makes a decoy that behaves like a real request to the
    ///     requester (so a response never reveals whether an account exists) and simply expires.
    ///   - ttl: seconds until a pending request expires; an approved one then has as long again to complete.
    ///   - deviceName: the requesting device's name, shown to the approving one.
    ///   - payload: data kept with the request for whoever completes it.
    ///   - matchDigits: length of the match code.
    ///   - platform: the requesting device's platform label, shown to the approving one.
    ///   - network: the requester's network (``AuthRequestContext/clientNetwork``), shown to the approving one.
    public func create(
        kind: String, userID: UUID?, ttl: Int, deviceName: String?, payload: [String: JSONValue], matchDigits: Int = 3, platform: String? = nil,
        network: String? = nil
    ) async throws -> (approval: ApprovalRecord, matchCode: String) {
        let id = Base64URL.encode(SecureRandom.bytes(32))
        let matchCode = SecureRandom.digits(matchDigits)
        let now = clock.now()
        let approval = ApprovalRecord(
            id: id, kind: kind, userID: userID, matchCodeDigest: Hex.encode(digest(id: id, matchCode: matchCode)), matchAttempts: 0,
            state: .pending, createdAt: now, expiresAt: now.addingTimeInterval(TimeInterval(ttl)), completeBy: nil,
            deviceName: deviceName, payload: payload, platform: platform, network: network
        )
        let job = jobs?.record(kind: Self.deliveryJob, payload: ["approval_id": .string(id)], claimed: true)
        try await store.write([]) { state in
            state.put(approval)
            if let job { state.put(job) }
        }
        if let jobs, let job {
            Task { await jobs.run(job, claimed: true) }
        } else {
            await deliverNew(id: id)
        }
        return (approval, matchCode)
    }

    /// Tells the user of a new request: this instance's event streams, the other instances, the
    /// events (webhooks, push). Nothing for a decoy or a request no longer pending.
    func deliverNew(id: String) async {
        guard let approval = try? await approval(id: id), let userID = approval.userID, approval.status(at: clock.now()) == .pending else { return }
        yield(approval, to: userID)
        await cluster?.publishApproval(id: id, userID: userID)
        logger.info("approval requested", metadata: ["user.id": "\(userID.lowercased)", "approval.kind": "\(approval.kind)"])
        await events?.emit("approval.requested", Self.eventData(approval, userID: userID))
    }

    /// An approval's event data: never the match code.
    static func eventData(_ approval: ApprovalRecord, userID: UUID) -> [String: JSONValue] {
        var data: [String: JSONValue] = [
            "user_id": .string(userID.lowercased), "approval_id": .string(approval.id), "kind": .string(approval.kind),
            "expires_at": .string(Timestamp.string(approval.expiresAt)),
        ]
        if let name = approval.deviceName { data["device_name"] = .string(name) }
        if let platform = approval.platform { data["platform"] = .string(platform) }
        if let network = approval.network { data["network"] = .string(network) }
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
        let prefix = kind.flatMap { kind in auditNames.withLock { $0[kind] } ?? kinds.withLock { $0[kind]?.auditPrefix } } ?? "approval"
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

    /// Approves a pending request of `userID` if `matchCode` is right, recording the approving
    /// session (its `auth_time`, `amr`) and the user's credential version for the requester.
    /// - Throws: 404 `NOT_FOUND` (no such request for this user), 409 `INVALID_STATE` (not pending),
    ///   401 `INVALID_CODE` (wrong match code; the kind's last wrong one denies the request).
    @discardableResult
    package func approve(id: String, userID: UUID, matchCode: String, by session: SessionRecord) async throws -> ApprovalRecord {
        guard Self.isWellFormed(id) else { throw AuthError.notFound("No such approval request.") }
        let now = clock.now()
        let presented = digest(id: id, matchCode: matchCode)
        // The user, the approving session, then the request: the order every write that takes them
        // locks them in. The session is checked here, not only when the request arrived: a reset
        // that ended it while the body was on its way must win (contract §12).
        let (approval, remaining) = try await store.write([.user(userID), .session(session.id), .approval(id)]) { state -> (ApprovalRecord, Int?) in
            guard let live = state.session(id: session.id), live.userID == userID, live.expiresAt > now else { throw AuthError.unauthorized }
            guard var approval = state.approval(id: id), approval.userID == userID, let user = state.user(id: userID) else {
                throw AuthError.notFound("No such approval request.")
            }
            guard approval.status(at: now) == .pending else { throw AuthError.invalidState("This request is no longer pending.") }
            if ConstantTime.equals(presented, Hex.decode(approval.matchCodeDigest) ?? []) {
                approval.state = .approved
                approval.completeBy = now.addingTimeInterval(approval.expiresAt.timeIntervalSince(approval.createdAt))
                approval.approvedBy = .init(sessionID: session.id, authTime: session.signedInAt, amr: session.amr, credentialVersion: user.credentialVersion)
                state.put(approval)
                return (approval, nil)
            }
            let limit = self.rules(approval.kind).matchAttempts
            approval.matchAttempts += 1
            if approval.matchAttempts >= limit { approval.state = .denied }
            state.put(approval)
            return (approval, max(0, limit - approval.matchAttempts))
        }
        if let remaining {
            logger.warning("wrong approval match code", metadata: ["user.id": "\(userID.lowercased)"])
            if remaining == 0 { await resolved(approval, userID: userID, status: "denied", reason: "wrong_match_code") }
            throw AuthError.wrongMatchCode(attemptsRemaining: remaining)
        }
        logger.info("approval granted", metadata: ["user.id": "\(userID.lowercased)"])
        await resolved(approval, userID: userID, status: "approved", reason: nil)
        return approval
    }

    /// Denies a pending request of `userID`; `reason` (e.g. `not_me`) goes to the kind's ``ApprovalKindRules/denied``.
    /// A provider denies its own kind's requests this way too (the others from a network its user disowned).
    /// - Throws: 404 `NOT_FOUND`, 409 `INVALID_STATE`.
    @discardableResult
    public func deny(id: String, userID: UUID, reason: String? = nil) async throws -> ApprovalRecord {
        guard Self.isWellFormed(id) else { throw AuthError.notFound("No such approval request.") }
        let now = clock.now()
        let approval = try await store.write([.approval(id)]) { state -> ApprovalRecord in
            guard var approval = state.approval(id: id), approval.userID == userID else { throw AuthError.notFound("No such approval request.") }
            guard approval.status(at: now) == .pending else { throw AuthError.invalidState("This request is no longer pending.") }
            approval.state = .denied
            state.put(approval)
            return approval
        }
        logger.info("approval denied", metadata: ["user.id": "\(userID.lowercased)"])
        await resolved(approval, userID: userID, status: "denied", reason: reason)
        return approval
    }

    /// `approval.resolved`, and the kind's own reaction to a denial.
    private func resolved(_ approval: ApprovalRecord, userID: UUID, status: String, reason: String?) async {
        await events?.emit(
            "approval.resolved",
            ["user_id": .string(userID.lowercased), "approval_id": .string(approval.id), "kind": .string(approval.kind), "status": .string(status)])
        if status == "denied", let denied = rules(approval.kind).denied { await denied(approval, reason) }
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

    /// Collects an approved request of `kind` for the one who made it, once whatever the
    /// concurrency: it becomes `completed` in the same write that reads the user, whose credentials
    /// must be those the approver saw (a reset, change or disable in between refuses it).
    /// - Parameters:
    ///   - id: the request's id.
    ///   - kind: its kind; another kind's request is not found.
    ///   - requester: whether the caller made the request (checks a secret kept in its payload);
    ///     runs inside the store's write, so keep it short.
    /// - Returns: the request and its user as they are now.
    /// - Throws: 404 `NOT_FOUND` (no such request, another kind, or not the requester's), 400
    ///   `PENDING`, 403 `DENIED` (denied, or the credentials changed since), 410 `EXPIRED`, 409
    ///   `INVALID_STATE` (collected already).
    public func collect(
        id: String, kind: String, requester: @escaping @Sendable (ApprovalRecord) -> Bool
    ) async throws -> (approval: ApprovalRecord, user: UserRecord) {
        let notFound = AuthError.notFound("No such request.")
        guard Self.isWellFormed(id) else { throw notFound }
        let now = clock.now()
        // Who it is for first (a decoy is for nobody), then one write with the user before the request.
        guard let found = try await approval(id: id), found.kind == kind, requester(found) else { throw notFound }
        try Self.requireApproved(found.status(at: now))
        guard let userID = found.userID else { throw AuthError.pending }
        return try await store.write([.user(userID), .approval(id)]) { state in
            guard var approval = state.approval(id: id), approval.kind == kind, requester(approval) else { throw notFound }
            try Self.requireApproved(approval.status(at: now))
            guard let user = state.user(id: userID), user.disabledAt == nil, let approver = approval.approvedBy,
                approver.credentialVersion == user.credentialVersion
            else { throw Self.credentialsChanged }
            approval.state = .completed
            state.put(approval)
            return (approval, user)
        }
    }

    /// 403 `DENIED` when the account changed (a reset, a password change, a disable) after the approval.
    static let credentialsChanged = AuthError(
        status: .forbidden, code: "DENIED", message: "The account's password or sign-in methods changed after this was approved. Start again.")

    static func requireApproved(_ status: ApprovalRecord.Status) throws(AuthError) {
        switch status {
        case .approved: return
        case .pending: throw AuthError.pending
        case .denied: throw AuthError.denied
        case .expired: throw AuthError.expired
        case .completed: throw AuthError.invalidState("This request was completed already.")
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

/// How requests of one kind behave (``ApprovalService/register(kind:_:)``).
public struct ApprovalKindRules: Sendable {
    /// The audit events' prefix: `PREFIX_approved`, `PREFIX_denied`.
    public var auditPrefix: String
    /// Wrong match codes that deny a request (1: the first wrong one does).
    public var matchAttempts: Int
    /// Whether a new request of this kind may push an alert to the user's devices now; nil: always.
    public var pushes: (@Sendable (UUID) async -> Bool)?
    /// What a denial does beyond the request's state (the request, the reason the approver gave).
    public var denied: (@Sendable (ApprovalRecord, String?) async -> Void)?

    /// Creates the rules.
    public init(
        auditPrefix: String = "approval", matchAttempts: Int = 3, pushes: (@Sendable (UUID) async -> Bool)? = nil,
        denied: (@Sendable (ApprovalRecord, String?) async -> Void)? = nil
    ) {
        self.auditPrefix = auditPrefix
        self.matchAttempts = max(1, matchAttempts)
        self.pushes = pushes
        self.denied = denied
    }
}
