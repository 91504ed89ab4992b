import AuthKernel
/// One operator command. The CLI parses it, then sends it to a running server over the admin socket
/// or, with no server running, runs it on the data folder itself: the same ``AdminOperations`` run
/// it either way, so the output is the same.
package enum AdminAction: Codable, Sendable, Equatable {
    /// Every user, as a table or JSON.
    case listUsers(json: Bool)
    /// One user by id, email or username.
    case showUser(String, json: Bool)
    /// Disables (and ends every session of) or enables a user.
    case setDisabled(String, Bool)
    /// Deletes a user with its identities, sessions and codes.
    case deleteUser(String)
    /// A user's sessions.
    case listSessions(String, json: Bool)
    /// Ends one session by id.
    case revokeSession(String)
    /// Ends every session of a user.
    case revokeAllSessions(String)
    /// The signing keys and their state.
    case listKeys(json: Bool)
    /// A new signing key; the old one verifies until its tokens have expired.
    case rotateKey
    /// A consistent copy of the store and the keys, written to a file.
    case backup(to: String)
    /// What the server serves: configuration, store and keys.
    case check
    /// Every record, key and secret, from any backend, written to a file in the backup format.
    case export(to: String)
    /// An export or backup loaded into an empty store (a database backend).
    case importBundle(from: String)
    /// A new service key; its secret is printed once.
    case createServiceKey(String)
    /// The service keys by name and prefix.
    case listServiceKeys(json: Bool)
    /// Revokes a service key by name.
    case revokeServiceKey(String)
    /// Users from another system, JSON lines (contract §11); with `dryRun` nothing is written.
    case importUsers(from: String, dryRun: Bool)
    /// Registers an OpenID client; prints `{"client_id","client_secret"?}` once.
    case createClient(OpenIDClientSettings)
    /// The registered OpenID clients.
    case listClients(json: Bool)
    /// One client's settings (never its secret).
    case showClient(String, json: Bool)
    /// Changes what the settings name.
    case updateClient(String, OpenIDClientSettings)
    /// A new secret, printed once; the old one works `grace` more seconds.
    case rotateClientSecret(String, grace: Int)
    /// Removes an OpenID client by id: its codes and tokens stop working.
    case deleteClient(String)
    /// Makes an existing user with a verified email an operator of the console.
    case grantOperator(String)
    /// Takes the console's role away.
    case revokeOperator(String)
    /// The console's operators.
    case listOperators(json: Bool)
    /// A single-use link (24 h) that makes the email's account an operator.
    case inviteOperator(String)
    /// Adds the user to groups (`add` true) or removes it from them.
    case changeGroups(String, add: Bool, [String])
    /// Invites an address, with groups and a display name; `vouch` skips the mailed code.
    case inviteUser(String, groups: [String], displayName: String?, vouch: Bool)
    /// The pending invitations.
    case listInvitations(json: Bool)
    /// Ends a pending invitation.
    case revokeInvitation(String)
}

/// What a command printed, and how the process should exit.
package struct AdminOutput: Codable, Sendable, Equatable {
    /// Text for standard output (a table, JSON, or a sentence).
    package var text: String
    /// 0 on success, 1 when the command failed (then `note` says why, or `text` reports what was refused).
    package var exitCode: Int32
    /// A sentence for standard error beside what `text` prints (a reminder), so that standard
    /// output stays the JSON a script pipes on (`authd clients create … | jq`).
    package var note: String?

    /// Creates an output.
    package init(text: String, exitCode: Int32 = 0, note: String? = nil) {
        self.text = text
        self.exitCode = exitCode
        self.note = note
    }

    enum CodingKeys: String, CodingKey { case text, exitCode = "exit_code", note }
}
