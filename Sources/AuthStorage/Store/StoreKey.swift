package import Foundation

/// A record, or a set of records, that a store read or write works on.
///
/// The file store holds everything in memory and needs no keys; a database store loads exactly the
/// rows the keys name into a fresh ``StoreState`` (locking them for a write) before it runs the body.
/// A body must therefore name every record it looks at: what it did not name, it does not see.
package enum StoreKey: Sendable, Hashable {
    /// The user with this id.
    case user(UUID)
    /// The user with this case-folded email.
    case userByEmail(String)
    /// The user with this user name (compared case-insensitively).
    case userByUsername(String)
    /// The user an identity belongs to.
    case userByIdentity(Identity)
    /// Every user (admin listings).
    case allUsers
    /// One page of users (the admin API): ids after `after` in id order, whose email or user name
    /// contains `query` (lower case; empty matches all); at most `limit`.
    case usersPage(query: String, after: UUID?, limit: Int)
    /// The session with this id.
    case session(UUID)
    /// The session holding a current or retired refresh token with this hash.
    case sessionByRefreshHash(String)
    /// The same, for a rotation: a database backend may answer from a copy of any age, since the
    /// rotation reads only what a session never changes (its id, user, kind and client) before its
    /// write, and the write checks the row's version.
    case sessionToRotate(refreshHash: String)
    /// Every session of a user.
    case sessionsOfUser(UUID)
    /// Every session (admin listings).
    case allSessions
    /// Sessions that expired before this instant, except those of anonymous users without any
    /// identity (see ``anonymousUsersIdle(before:)``); a database loads at most a batch.
    case sessionsExpired(before: Date)
    /// Anonymous users without any identity that have changed nothing, and had no session, since
    /// this instant; a database loads at most a batch.
    case anonymousUsersIdle(before: Date)
    /// The code record for a purpose and key.
    case code(purpose: String, key: String)
    /// Every code record (export).
    case allCodes
    /// Every code record of one purpose (admin listings of small sets, such as service keys).
    case codesOfPurpose(String)
    /// Code records that expired before this instant.
    case codesExpired(before: Date)
    /// The approval request with this id.
    case approval(String)
    /// Every approval request of a user.
    case approvalsOfUser(UUID)
    /// Every approval request (export).
    case allApprovals
    /// Approval requests whose current expiry is before this instant.
    case approvalsExpired(before: Date)
    /// The background job with this id.
    case job(UUID)
    /// Every background job.
    case allJobs
}
