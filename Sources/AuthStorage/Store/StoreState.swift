import Dispatch
package import Foundation

/// Everything the store holds, in memory, with the indexes the queries need.
///
/// Writers change it only through the `put`/`delete` methods, which keep the indexes right and
/// record each change in ``pending`` so the store can journal exactly what was applied.
package struct StoreState: Sendable {
    /// Users by id.
    package private(set) var users = ShardedTable<UUID, UserRecord>()
    /// Sessions by id.
    package private(set) var sessions = ShardedTable<UUID, SessionRecord>()
    /// One-time codes by ``CodeRecord/id``.
    package private(set) var codes = ShardedTable<String, CodeRecord>()
    /// Approval requests by id.
    package private(set) var approvals = ShardedTable<String, ApprovalRecord>()
    /// Background jobs by id.
    package private(set) var jobs = ShardedTable<UUID, JobRecord>()

    private var userByEmail = ShardedTable<String, UUID>()
    private var userByIdentity = ShardedTable<Identity, UUID>()
    private var userByUsername = ShardedTable<String, UUID>()
    private var sessionsByUser = ShardedTable<UUID, Set<UUID>>()
    private var sessionByRefreshHash = ShardedTable<String, UUID>()
    private var approvalsByUser = ShardedTable<UUID, Set<String>>()

    /// Changes applied since the store last took them.
    package var pending: [StoreChange] = []

    /// An empty store.
    package init() {}

    // MARK: Reads

    /// The user with this id.
    package func user(id: UUID) -> UserRecord? { users[id] }
    /// The user with this (case-folded) email.
    package func user(email: String) -> UserRecord? { userByEmail[email].flatMap { users[$0] } }
    /// The user this identity belongs to.
    package func user(identity: Identity) -> UserRecord? { userByIdentity[identity].flatMap { users[$0] } }
    /// The user with this user name, compared case-insensitively.
    package func user(username: String) -> UserRecord? { userByUsername[username.lowercased()].flatMap { users[$0] } }
    /// The session with this id.
    package func session(id: UUID) -> SessionRecord? { sessions[id] }
    /// The session holding a current or retired refresh token with this hash.
    package func session(refreshHash: String) -> SessionRecord? { sessionByRefreshHash[refreshHash].flatMap { sessions[$0] } }
    /// The sessions of a user, oldest first.
    package func sessions(userID: UUID) -> [SessionRecord] {
        (sessionsByUser[userID] ?? []).compactMap { sessions[$0] }.sorted { $0.createdAt < $1.createdAt }
    }
    /// The approval request with this id.
    package func approval(id: String) -> ApprovalRecord? { approvals[id] }
    /// The approval requests of a user, oldest first.
    package func approvals(userID: UUID) -> [ApprovalRecord] {
        (approvalsByUser[userID] ?? []).compactMap { approvals[$0] }.sorted { $0.createdAt < $1.createdAt }
    }
    /// The code record for a purpose and key.
    package func code(purpose: String, key: String) -> CodeRecord? { codes[CodeRecord.id(purpose: purpose, key: key)] }

    /// One page of users in id order (as PostgreSQL orders uuids): ids after `after` whose email or
    /// user name contains `query` (already lower case; empty matches all), at most `limit`. A scan that
    /// keeps only the `limit` smallest, so a page of a million users sorts no more than a page.
    package func users(matching query: String, after: UUID?, limit: Int) -> [UserRecord] {
        let floor = after?.uuidString
        var page: [(key: String, user: UserRecord)] = []
        page.reserveCapacity(limit + 1)
        users.forEachValue(inShards: 0..<ShardedTable<UUID, UserRecord>.shardCount) { user in
            if !query.isEmpty {
                let inEmail = user.email?.contains(query) ?? false
                guard inEmail || (user.username?.lowercased().contains(query) ?? false) else { return }
            }
            let key = user.id.uuidString
            if let floor, key <= floor { return }
            if page.count == limit, let last = page.last, key >= last.key { return }
            let at = page.firstIndex { $0.key > key } ?? page.endIndex
            page.insert((key, user), at: at)
            if page.count > limit { page.removeLast() }
        }
        return page.map(\.user)
    }

    /// Every code record of `purpose` (a small set: a full scan in memory).
    package func codes(purpose: String) -> [CodeRecord] {
        var found: [CodeRecord] = []
        codes.forEachValue(inShards: 0..<ShardedTable<String, CodeRecord>.shardCount) { if $0.purpose == purpose { found.append($0) } }
        return found
    }

    // MARK: Writes

    /// Inserts or replaces a user. The caller has checked uniqueness of email, user name and identities.
    package mutating func put(_ user: UserRecord) {
        apply(.putUser(user))
        pending.append(.putUser(user))
    }

    /// Deletes a user with its sessions and the codes sent to its email.
    package mutating func deleteUser(id: UUID) {
        guard let user = users[id] else { return }
        for s in sessions(userID: id) { deleteSession(id: s.id) }
        if let email = user.email {
            for code in codes.values where code.key == email { deleteCode(id: code.id) }
        }
        for approval in approvals(userID: id) { deleteApproval(id: approval.id) }
        apply(.deleteUser(id))
        pending.append(.deleteUser(id))
    }

    /// Inserts or replaces a session. The usual refresh rotation is recorded as a ``SessionRotation``
    /// rather than the whole record.
    package mutating func put(_ session: SessionRecord) {
        if let old = sessions[session.id], let rotation = SessionRotation(from: old, to: session) {
            // The rotation was checked to rebuild `session` exactly: store it rather than rebuild it again.
            apply(rotation, from: old, giving: session)
            pending.append(.rotateSession(rotation))
        } else {
            apply(.putSession(session))
            pending.append(.putSession(session))
        }
    }

    /// Deletes a session.
    package mutating func deleteSession(id: UUID) {
        guard sessions[id] != nil else { return }
        apply(.deleteSession(id))
        pending.append(.deleteSession(id))
    }

    /// Inserts or replaces a code record.
    package mutating func put(_ code: CodeRecord) {
        apply(.putCode(code))
        pending.append(.putCode(code))
    }

    /// Deletes a code record.
    package mutating func deleteCode(id: String) {
        guard codes[id] != nil else { return }
        apply(.deleteCode(id))
        pending.append(.deleteCode(id))
    }

    /// Inserts or replaces an approval request.
    package mutating func put(_ approval: ApprovalRecord) {
        apply(.putApproval(approval))
        pending.append(.putApproval(approval))
    }

    /// Deletes an approval request.
    package mutating func deleteApproval(id: String) {
        guard approvals[id] != nil else { return }
        apply(.deleteApproval(id))
        pending.append(.deleteApproval(id))
    }

    /// Inserts or replaces a background job.
    package mutating func put(_ job: JobRecord) {
        apply(.putJob(job))
        pending.append(.putJob(job))
    }

    /// Deletes a background job.
    package mutating func deleteJob(id: UUID) {
        guard jobs[id] != nil else { return }
        apply(.deleteJob(id))
        pending.append(.deleteJob(id))
    }

    // MARK: Loading (database stores)

    /// Adds a record read from a database without recording it as a change.
    package mutating func load(_ record: StoreChange) { apply(record) }

    /// Applies a change from a snapshot or export as a write (recorded, so the store persists it).
    package mutating func replay(_ change: StoreChange) {
        apply(change)
        pending.append(change)
    }

    /// The changes applied since the last call, in order, and forgets them.
    /// - Parameter wholeRecords: give each rotated session as its whole record (for a backend that
    ///   writes rows, not a journal); a session deleted later in the same changes is left to its delete.
    package mutating func takeChanges(wholeRecords: Bool = false) -> [StoreChange] {
        defer { pending = [] }
        guard wholeRecords else { return pending }
        return pending.compactMap { change in
            guard case .rotateSession(let r) = change else { return change }
            return sessions[r.id].map { .putSession($0) }
        }
    }

    // MARK: Loading a snapshot

    /// The state a snapshot's records give, the same as applying them in order, but with each table
    /// and index built on its own thread: applying a million users one by one took 4 s of start-up
    /// on one core. A snapshot holds only puts of distinct records; anything else (a delete, an id
    /// twice) is applied in order instead. The records come in chunks, as ``SnapshotFile`` decodes them.
    package static func loading(snapshot chunks: [[StoreChange]]) -> StoreState {
        var userCount = 0, sessionCount = 0, hashCount = 0
        var rest: [StoreChange] = []
        for chunk in chunks {
            for record in chunk {
                switch record {
                case .putUser: userCount += 1
                case .putSession(let s):
                    sessionCount += 1
                    hashCount += s.refreshHashes.count + s.retired.count
                case .putCode, .putApproval, .putJob: rest.append(record)
                case .deleteUser, .deleteSession, .rotateSession, .deleteCode, .deleteApproval, .deleteJob: return applyingInOrder(chunks)
                }
            }
        }
        let tables = BulkTables()
        let counts = (users: userCount, sessions: sessionCount, hashes: hashCount)
        // The three tables with an entry per user are each built in `ranges` parts by shard range
        // on separate threads: the parts keep the cores evenly busy, and each part's dictionaries
        // (a fraction of the table) stay in the cache better than the whole table did.
        let ranges = Self.loadingRanges
        let shardRanges = (0..<ranges).map { i in
            (i * ShardedTable<UUID, UserRecord>.shardCount / ranges)..<((i + 1) * ShardedTable<UUID, UserRecord>.shardCount / ranges)
        }
        let users = ParallelResults<ShardedTable<UUID, UserRecord>>(count: ranges)
        let byEmail = ParallelResults<ShardedTable<String, UUID>>(count: ranges)
        let byIdentity = ParallelResults<ShardedTable<Identity, UUID>>(count: ranges)
        // Each job reads every record but builds only its own table (or part of one).
        DispatchQueue.concurrentPerform(iterations: 3 + 3 * ranges) { job in
            switch job {
            case 0:
                var d = ShardedTable<String, UUID>()
                for chunk in chunks { for case .putUser(let u) in chunk { if let name = u.username { d[name.lowercased()] = u.id } } }
                tables.userByUsername = d
            case 1:
                var d = ShardedTable<UUID, SessionRecord>(minimumCapacity: counts.sessions)
                var byUser = ShardedTable<UUID, Set<UUID>>()
                for chunk in chunks {
                    for case .putSession(let s) in chunk {
                        d[s.id] = s
                        byUser[s.userID, default: []].insert(s.id)
                    }
                }
                tables.sessions = d
                tables.sessionsByUser = byUser
            case 2:
                var d = ShardedTable<String, UUID>(minimumCapacity: counts.hashes)
                for chunk in chunks {
                    for case .putSession(let s) in chunk {
                        for h in s.refreshHashes { d[h] = s.id }
                        for r in s.retired { d[r.hash] = s.id }
                    }
                }
                tables.sessionByRefreshHash = d
            default:
                let part = (job - 3) % ranges, range = shardRanges[part]
                switch (job - 3) / ranges {
                case 0:
                    var d = ShardedTable<UUID, UserRecord>(minimumCapacity: counts.users, inShards: range)
                    for chunk in chunks { for case .putUser(let u) in chunk { d.insert(u, forKey: u.id, ifInShards: range) } }
                    users.set(part, .success(d))
                case 1:
                    var d = ShardedTable<String, UUID>(minimumCapacity: counts.users, inShards: range)
                    for chunk in chunks { for case .putUser(let u) in chunk { if let email = u.email { d.insert(u.id, forKey: email, ifInShards: range) } } }
                    byEmail.set(part, .success(d))
                default:
                    var d = ShardedTable<Identity, UUID>(minimumCapacity: counts.users, inShards: range)
                    for chunk in chunks { for case .putUser(let u) in chunk { for identity in u.identities { d.insert(u.id, forKey: identity, ifInShards: range) } } }
                    byIdentity.set(part, .success(d))
                }
            }
        }
        // Every part is set (the jobs cannot fail); were one missing, the counts below would differ.
        tables.users = ShardedTable(joining: (try? users.values()) ?? [], shards: shardRanges)
        tables.userByEmail = ShardedTable(joining: (try? byEmail.values()) ?? [], shards: shardRanges)
        tables.userByIdentity = ShardedTable(joining: (try? byIdentity.values()) ?? [], shards: shardRanges)
        guard tables.users.count == userCount, tables.sessions.count == sessionCount else { return applyingInOrder(chunks) }
        var state = StoreState()
        state.users = tables.users
        state.userByEmail = tables.userByEmail
        state.userByUsername = tables.userByUsername
        state.userByIdentity = tables.userByIdentity
        state.sessions = tables.sessions
        state.sessionsByUser = tables.sessionsByUser
        state.sessionByRefreshHash = tables.sessionByRefreshHash
        for record in rest { state.apply(record) }
        return state
    }

    /// Parts per user table when loading a snapshot (``loading(snapshot:)``). Measured at a million
    /// users on 2 cores (medians of six opens): whole tables 1.18 s, two parts 0.98 s, three 1.29 s
    /// (each part reads every record, and three jobs a table no longer divide evenly between the cores).
    package static let loadingRanges = 2

    private static func applyingInOrder(_ chunks: [[StoreChange]]) -> StoreState {
        var state = StoreState()
        for chunk in chunks { for record in chunk { state.apply(record) } }
        return state
    }

    /// Tables built by separate threads, each writing only its own property.
    private final class BulkTables: @unchecked Sendable {
        var users = ShardedTable<UUID, UserRecord>()
        var userByEmail = ShardedTable<String, UUID>()
        var userByUsername = ShardedTable<String, UUID>()
        var userByIdentity = ShardedTable<Identity, UUID>()
        var sessions = ShardedTable<UUID, SessionRecord>()
        var sessionsByUser = ShardedTable<UUID, Set<UUID>>()
        var sessionByRefreshHash = ShardedTable<String, UUID>()
    }

    // MARK: Applying changes (journal replay and writes)

    /// Applies one change and updates the indexes; does not record it.
    package mutating func apply(_ change: StoreChange) {
        switch change {
        case .putUser(let user):
            if let old = users[user.id] { unindex(old) }
            users[user.id] = user
            if let email = user.email { userByEmail[email] = user.id }
            if let name = user.username { userByUsername[name.lowercased()] = user.id }
            for identity in user.identities { userByIdentity[identity] = user.id }
        case .deleteUser(let id):
            if let old = users.removeValue(forKey: id) { unindex(old) }
        case .putSession(let session):
            // The usual rotation arrives as `.rotateSession`; a whole update is a retry inside the
            // grace, an arbitrary replacement, or a line from a journal written before rotations were.
            if let old = sessions[session.id], old.userID == session.userID {
                // A rotation keeps most of the family's hashes: touch only those that came or went,
                // not all of them, in what is the largest table of the store.
                let before = Set(old.refreshHashes).union(old.retired.lazy.map(\.hash))
                var after = Set(session.refreshHashes)
                after.formUnion(session.retired.lazy.map(\.hash))
                for h in before.subtracting(after) where sessionByRefreshHash[h] == session.id { sessionByRefreshHash[h] = nil }
                for h in after.subtracting(before) { sessionByRefreshHash[h] = session.id }
                sessions[session.id] = session
            } else {
                if let old = sessions[session.id] { unindex(old) }
                sessions[session.id] = session
                sessionsByUser[session.userID, default: []].insert(session.id)
                for h in session.refreshHashes { sessionByRefreshHash[h] = session.id }
                for r in session.retired { sessionByRefreshHash[r.hash] = session.id }
            }
        case .deleteSession(let id):
            if let old = sessions.removeValue(forKey: id) { unindex(old) }
        case .rotateSession(let rotation):
            guard let old = sessions[rotation.id] else { return }
            apply(rotation, from: old, giving: rotation.applied(to: old))
        case .putCode(let code):
            codes[code.id] = code
        case .deleteCode(let id):
            codes.removeValue(forKey: id)
        case .putJob(let job):
            jobs[job.id] = job
        case .deleteJob(let id):
            jobs.removeValue(forKey: id)
        case .putApproval(let approval):
            approvals[approval.id] = approval
            if let user = approval.userID { approvalsByUser[user, default: []].insert(approval.id) }
        case .deleteApproval(let id):
            if let old = approvals.removeValue(forKey: id), let user = old.userID {
                approvalsByUser[user]?.remove(id)
                if approvalsByUser[user]?.isEmpty == true { approvalsByUser[user] = nil }
            }
        }
    }

    /// Stores `session`, which is `rotation` applied to `old`, and updates the hash index.
    private mutating func apply(_ rotation: SessionRotation, from old: SessionRecord, giving session: SessionRecord) {
        // Only the hashes that fell off the front leave the index; the retired ones stay, the new come.
        for r in old.retired.prefix(rotation.dropped) where sessionByRefreshHash[r.hash] == session.id
            && !session.refreshHashes.contains(r.hash) && !session.retired.contains(where: { $0.hash == r.hash }) {
            sessionByRefreshHash[r.hash] = nil
        }
        for h in session.refreshHashes { sessionByRefreshHash[h] = session.id }
        sessions[session.id] = session
    }

    private mutating func unindex(_ user: UserRecord) {
        if let email = user.email, userByEmail[email] == user.id { userByEmail[email] = nil }
        if let name = user.username?.lowercased(), userByUsername[name] == user.id { userByUsername[name] = nil }
        for identity in user.identities where userByIdentity[identity] == user.id { userByIdentity[identity] = nil }
    }

    private mutating func unindex(_ session: SessionRecord) {
        sessionsByUser[session.userID]?.remove(session.id)
        if sessionsByUser[session.userID]?.isEmpty == true { sessionsByUser[session.userID] = nil }
        for h in session.refreshHashes where sessionByRefreshHash[h] == session.id { sessionByRefreshHash[h] = nil }
        for r in session.retired where sessionByRefreshHash[r.hash] == session.id { sessionByRefreshHash[r.hash] = nil }
    }
}
