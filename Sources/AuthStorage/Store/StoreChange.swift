package import Foundation

/// One change to the store, as written to the journal. Changes are whole-record upserts and deletes,
/// and the usual refresh rotation of a session (``SessionRotation``), which is applied only on the
/// record it was made from: the journal replays each line once, in order, after the snapshot's.
package enum StoreChange: Codable, Sendable, Equatable {
    case putUser(UserRecord)
    case deleteUser(UUID)
    case putSession(SessionRecord)
    case deleteSession(UUID)
    case rotateSession(SessionRotation)
    case putCode(CodeRecord)
    case deleteCode(String)
    case putApproval(ApprovalRecord)
    case deleteApproval(String)
    case putJob(JobRecord)
    case deleteJob(UUID)

    /// The `op` field of a change in the journal and the snapshot.
    package enum Op: String, Codable {
        case putUser = "put_user", deleteUser = "delete_user", putSession = "put_session", deleteSession = "delete_session"
        case rotateSession = "rotate_session"
        case putCode = "put_code", deleteCode = "delete_code", putApproval = "put_approval", deleteApproval = "delete_approval"
        case putJob = "put_job", deleteJob = "delete_job"
    }
    private enum CodingKeys: String, CodingKey { case op, user, session, rotation, code, approval, job, id }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        switch try c.decode(Op.self, forKey: .op) {
        case .putUser: self = .putUser(try c.decode(UserRecord.self, forKey: .user))
        case .deleteUser: self = .deleteUser(try c.decode(UUID.self, forKey: .id))
        case .putSession: self = .putSession(try c.decode(SessionRecord.self, forKey: .session))
        case .deleteSession: self = .deleteSession(try c.decode(UUID.self, forKey: .id))
        case .rotateSession: self = .rotateSession(try c.decode(SessionRotation.self, forKey: .rotation))
        case .putCode: self = .putCode(try c.decode(CodeRecord.self, forKey: .code))
        case .deleteCode: self = .deleteCode(try c.decode(String.self, forKey: .id))
        case .putApproval: self = .putApproval(try c.decode(ApprovalRecord.self, forKey: .approval))
        case .deleteApproval: self = .deleteApproval(try c.decode(String.self, forKey: .id))
        case .putJob: self = .putJob(try c.decode(JobRecord.self, forKey: .job))
        case .deleteJob: self = .deleteJob(try c.decode(UUID.self, forKey: .id))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .putUser(let u): try c.encode(Op.putUser, forKey: .op); try c.encode(u, forKey: .user)
        case .deleteUser(let id): try c.encode(Op.deleteUser, forKey: .op); try c.encode(id, forKey: .id)
        case .putSession(let s): try c.encode(Op.putSession, forKey: .op); try c.encode(s, forKey: .session)
        case .deleteSession(let id): try c.encode(Op.deleteSession, forKey: .op); try c.encode(id, forKey: .id)
        case .rotateSession(let r): try c.encode(Op.rotateSession, forKey: .op); try c.encode(r, forKey: .rotation)
        case .putCode(let r): try c.encode(Op.putCode, forKey: .op); try c.encode(r, forKey: .code)
        case .deleteCode(let id): try c.encode(Op.deleteCode, forKey: .op); try c.encode(id, forKey: .id)
        case .putApproval(let a): try c.encode(Op.putApproval, forKey: .op); try c.encode(a, forKey: .approval)
        case .deleteApproval(let id): try c.encode(Op.deleteApproval, forKey: .op); try c.encode(id, forKey: .id)
        case .putJob(let j): try c.encode(Op.putJob, forKey: .op); try c.encode(j, forKey: .job)
        case .deleteJob(let id): try c.encode(Op.deleteJob, forKey: .op); try c.encode(id, forKey: .id)
        }
    }
}
