import AuthKernel
import FileStore
import AuthStorage
import Foundation
import Logging

/// Runs ``AdminAction``s on a server's kernel, store and keys: inside a running `authd serve`
/// (reached over the admin socket) or on a data folder opened by the CLI under its lock.
package struct AdminOperations: Sendable {
    let kernel: Kernel
    let store: any AuthStore
    let keyRing: SigningKeyRing
    /// The OpenID Provider's RSA keys, rotated with the Ed25519 ones.
    let rsa: (any RSASigning)?
    let cluster: (any ClusterEvents)?
    let dataFolder: String
    /// Who runs the command, for the log: "admin socket" or "admin cli".
    let via: String
    /// Imports users, when this server can.
    let importUsers: UserImporter?
    /// The providers started, for `check`'s list of what each declares.
    let providerTypes: [any AuthProvider.Type]

    /// Creates the operations over a built server (the CLI's direct mode).
    package init(server: AuthServer, dataFolder: String) throws {
        try self.init(
            kernel: server.kernel, store: server.store, keyRing: server.keyRing, rsa: server.rsa, cluster: server.cluster, dataFolder: dataFolder, via: "admin cli",
            importUsers: server.importUsers, providerTypes: server.providers.map { type(of: $0) })
    }

    init(
        kernel: Kernel, store: any AuthStore, keyRing: SigningKeyRing, rsa: (any RSASigning)?, cluster: (any ClusterEvents)?, dataFolder: String, via: String,
        importUsers: UserImporter?, providerTypes: [any AuthProvider.Type]
    ) throws {
        self.importUsers = importUsers
        self.providerTypes = providerTypes
        self.cluster = cluster
        self.kernel = kernel
        self.store = store
        self.keyRing = keyRing
        self.rsa = rsa
        self.dataFolder = dataFolder
        self.via = via
    }

    var clients: OpenIDClients { OpenIDClients(store: store, clock: kernel.clock, audience: kernel.config.audience) }
    var operators: Operators { Operators(store: store, clock: kernel.clock) }

    /// Runs one action; failures come back as output with exit code 1, never as a thrown error.
    /// - Parameter progress: where the long commands (`import-users`, `import`, `export`, `backup`)
    ///   report how far they have come.
    package func run(_ action: AdminAction, progress: AdminProgressSink? = nil) async -> AdminOutput {
        do {
            return try await perform(action, progress: progress ?? { _ in })
        } catch let error as AdminError {
            return Self.failed(error.message)
        } catch let error as AuthError {
            return Self.failed(error.message)
        } catch {
            return Self.failed("\(error)")
        }
    }

    /// A command that failed says why on standard error: standard output stays for what a script reads.
    static func failed(_ message: String) -> AdminOutput {
        AdminOutput(text: "", exitCode: 1, note: message)
    }

    private func perform(_ action: AdminAction, progress: @escaping AdminProgressSink) async throws -> AdminOutput {
        let now = kernel.clock.now()
        switch action {
        case .listUsers(let json):
            let users = try await store.read([.allUsers, .allSessions]) { state in
                state.users.values.sorted { $0.createdAt < $1.createdAt }.map { AdminUserView($0, sessions: state.sessions(userID: $0.id).count) }
            }
            return json ? try AdminFormat.json(users) : AdminOutput(text: AdminFormat.usersTable(users))

        case .showUser(let ref, let json):
            let user = try await user(ref)
            let view = try await store.read([.sessionsOfUser(user.id)]) { AdminUserView(user, sessions: $0.sessions(userID: user.id).count) }
            return json ? try AdminFormat.json(view) : AdminOutput(text: AdminFormat.userDetails(view))

        case .setDisabled(let ref, let disabled):
            let user = try await user(ref)
            _ = try await kernel.users.update(user.id) { $0.disabledAt = disabled ? ($0.disabledAt ?? now) : nil }
            if disabled { try await kernel.sessions.revokeAll(of: user.id) }
            await audit(disabled ? "user disabled; every session ended" : "user enabled", user: user.id, command: disabled ? "users disable" : "users enable")
            return AdminOutput(text: "user \(user.id.lowercased) \(disabled ? "disabled; its sessions have ended" : "enabled")\n")

        case .changeGroups(let ref, let add, let names):
            let user = try await user(ref)
            let asked = try UserGroups.validate(names)
            let groups = add ? user.groups + asked : user.groups.filter { !asked.contains($0) }
            let command = add ? "users groups add" : "users groups remove"
            let updated = try await UserAdministration(kernel: kernel).update(
                user, .init(groups: groups), by: .init(event: "admin", account: "authd " + command))
            let list = updated.groups.isEmpty ? "no group" : updated.groups.joined(separator: ", ")
            return AdminOutput(text: "\(updated.email ?? updated.id.lowercased) is in: \(list)\n")

        case .inviteUser(let email, let groups, let displayName, let vouch):
            let made = try await InvitationSender(kernel: kernel).invite(
                email: email, groups: groups, displayName: displayName, by: .init(event: "admin", account: "authd users invite"), vouched: vouch)
            return AdminOutput(text: String(decoding: made.json.bytes, as: UTF8.self) + "\n")

        case .listInvitations(let json):
            let pending = try await kernel.invitations.list()
            if json {
                var w = JSONWriter(capacity: 64 + 256 * pending.count)
                w.beginArray()
                for invitation in pending { InvitationSender.write(invitation, to: &w) }
                w.endArray()
                return AdminOutput(text: String(decoding: w.bytes, as: UTF8.self) + "\n")
            }
            return AdminOutput(text: AdminFormat.table(
                ["ID", "EMAIL", "GROUPS", "INVITED BY", "EXPIRES"],
                pending.map { [$0.id, $0.email, $0.groups.joined(separator: ",").ifEmpty("-"), $0.invitedBy, Timestamp.string($0.expiresAt)] }))

        case .revokeInvitation(let id):
            guard try await kernel.invitations.revoke(id: id) else { throw AdminError("no pending invitation has the id \(id)") }
            await kernel.audit.record("admin", account: "authd users invitations revoke", reason: "revoke invitation \(id)")
            return AdminOutput(text: "invitation \(id) revoked; its link no longer works\n")

        case .deleteUser(let ref):
            let user = try await user(ref)
            await kernel.accountDeletion.run(for: user)
            try await kernel.users.delete(user.id)
            await audit("user deleted", user: user.id, command: "users delete")
            await kernel.audit.record("account_deleted", user: user.id)
            return AdminOutput(text: "user \(user.id.lowercased) deleted with its identities, sessions and codes\n")

        case .grantOperator(let ref):
            let user = try await user(ref)
            try await operators.grant(user, by: "authd admins grant")
            await audit("console operator granted", user: user.id, command: "admins grant")
            return AdminOutput(text: "\(user.email ?? user.id.lowercased) is an operator of the console (\(kernel.config.issuer)/admin)\n")

        case .revokeOperator(let ref):
            let user = try await user(ref)
            guard try await operators.revoke(user.id) else { throw AdminError("\(user.email ?? user.id.lowercased) is not an operator") }
            await audit("console operator revoked", user: user.id, command: "admins revoke")
            return AdminOutput(text: "\(user.email ?? user.id.lowercased) is no longer an operator\n")

        case .listOperators(let json):
            let views = try await operators.list().map {
                AdminOperatorView(id: $0.userID.lowercased, email: $0.email, grantedAt: Timestamp.string($0.grantedAt), grantedBy: $0.grantedBy)
            }
            return json ? try AdminFormat.json(views) : AdminOutput(text: AdminFormat.table(["EMAIL", "ID", "GRANTED", "BY"], views.map { [$0.email, $0.id, $0.grantedAt, $0.grantedBy] }))

        case .inviteOperator(let address):
            guard let email = EmailAddress(address) else { throw AdminError("\(LogSafe.text(address, maxLength: 64)) is not an email address") }
            // The link has its holder add a passkey or an authenticator app: without either, it would be spent on a dead end.
            guard providerTypes.contains(where: { ["passkey", "totp"].contains($0.id) }) else {
                throw AdminError(
                    "an operator signs in with a passkey or an authenticator app, and neither is enabled: add \"passkey\" (with passkeys.rp_id) or \"totp\" to providers (now \(kernel.config.providers.joined(separator: ", "))), restart, and invite again"
                )
            }
            let token = try await kernel.tokens.issue(purpose: Operators.invitePurpose, subject: email.value, ttl: Operators.inviteTTL)
            await kernel.audit.record("admin", account: email.value, reason: "admins invite")
            kernel.logger.notice("console invite made", metadata: ["email": "\(email.value)", "via": "\(via)"])
            return AdminOutput(text: """
                Open this link within 24 hours to make \(email.value) an operator of the console (it works once):
                  \(kernel.config.issuer)/admin/setup?token=\(token)

                """)

        case .createServiceKey(let name):
            let secret = try await ServiceKeys(store: store, clock: kernel.clock).create(name: name)
            await kernel.audit.record("admin", account: name, reason: "service-keys create")
            kernel.logger.notice("service key created", metadata: ["service_key": "\(name)", "via": "\(via)"])
            return AdminOutput(text: "\(secret)\nservice key \(name): keep the line above; it is not shown again\n")

        case .listServiceKeys(let json):
            let keys = try await ServiceKeys(store: store, clock: kernel.clock).list().map {
                AdminServiceKeyView(name: $0.name, prefix: ServiceKeys.prefix + $0.prefix + "…", createdAt: Timestamp.string($0.createdAt))
            }
            return json ? try AdminFormat.json(keys) : AdminOutput(text: AdminFormat.table(["NAME", "PREFIX", "CREATED"], keys.map { [$0.name, $0.prefix, $0.createdAt] }))

        case .revokeServiceKey(let name):
            try await ServiceKeys(store: store, clock: kernel.clock).revoke(name: name)
            await kernel.audit.record("admin", account: name, reason: "service-keys revoke")
            kernel.logger.notice("service key revoked", metadata: ["service_key": "\(name)", "via": "\(via)"])
            return AdminOutput(text: "service key \(name) revoked\n")

        case .createClient(let settings):
            let created = try await clients.create(settings)
            await kernel.audit.record("admin", account: created.client.id, reason: "clients create")
            kernel.logger.notice("OpenID client registered", metadata: ["client.id": "\(created.client.id)", "via": "\(via)"])
            var shown: [String: String] = ["client_id": created.client.id]
            if let secret = created.secret { shown["client_secret"] = secret }
            let output = try AdminFormat.json(shown)
            return AdminOutput(text: output.text, note: created.secret == nil ? nil : "keep client_secret: it is not shown again")

        case .listClients(let json):
            let listed = try await clients.list().map { AdminClientView($0, now: now) }
            return json
                ? try AdminFormat.json(listed)
                : AdminOutput(
                    text: AdminFormat.table(
                        ["CLIENT ID", "NAME", "KIND", "REDIRECT URIS"],
                        listed.map { [$0.clientID, $0.name, ($0.isPublic ? "public" : "confidential") + ($0.firstParty ? ", first-party" : ""), $0.redirectURIs.joined(separator: " ")] }))

        case .showClient(let id, let json):
            guard let client = try await clients.find(id) else { throw AdminError("no client \(id)") }
            let view = AdminClientView(client, now: now)
            return json ? try AdminFormat.json(view) : AdminOutput(text: view.text)

        case .updateClient(let id, let settings):
            guard let client = try await clients.update(id, settings) else { throw AdminError("no client \(id)") }
            await kernel.audit.record("admin", account: id, reason: "clients update")
            return AdminOutput(text: AdminClientView(client, now: now).text)

        case .rotateClientSecret(let id, let grace):
            guard let (_, secret) = try await clients.rotateSecret(id, grace: grace) else { throw AdminError("no client \(id)") }
            await kernel.audit.record("admin", account: id, reason: "clients rotate-secret")
            kernel.logger.notice("OpenID client secret rotated", metadata: ["client.id": "\(id)", "grace": "\(grace)", "via": "\(via)"])
            let output = try AdminFormat.json(["client_id": id, "client_secret": secret])
            return AdminOutput(text: output.text, note: "keep client_secret: it is not shown again")

        case .deleteClient(let id):
            guard try await clients.delete(id) else { throw AdminError("no client \(id)") }
            await kernel.audit.record("admin", account: id, reason: "clients delete")
            return AdminOutput(text: "client \(id) deleted\n")

        case .listSessions(let ref, let json):
            let user = try await user(ref)
            let sessions = try await kernel.sessions.sessions(of: user.id).map(AdminSessionView.init)
            return json ? try AdminFormat.json(sessions) : AdminOutput(text: AdminFormat.sessionsTable(sessions))

        case .revokeSession(let ref):
            guard let id = UUID(uuidString: ref), let session = try await store.read([.session(id)], { $0.session(id: id) }) else {
                throw AdminError("no session \(ref)")
            }
            try await kernel.sessions.revoke(session.id, of: session.userID)
            await audit("session revoked", user: session.userID, command: "sessions revoke")
            return AdminOutput(text: "session \(session.id.lowercased) of user \(session.userID.lowercased) ended\n")

        case .revokeAllSessions(let ref):
            let user = try await user(ref)
            let count = try await kernel.sessions.sessions(of: user.id).count
            try await kernel.sessions.revokeAll(of: user.id)
            await audit("every session revoked", user: user.id, command: "sessions revoke --all-for")
            return AdminOutput(text: "\(count) session\(count == 1 ? "" : "s") of user \(user.id.lowercased) ended\n")

        case .listKeys(let json):
            let published = Set(keyRing.verificationKeys(now: now).map(\.kid))
            let keys = keyRing.all.map { AdminKeyView($0, active: $0.kid == keyRing.active.kid, published: published.contains($0.kid)) }
            return json ? try AdminFormat.json(keys) : AdminOutput(text: AdminFormat.keysTable(keys))

        case .rotateKey:
            let fresh = SigningKey(keyPair: Ed25519KeyPair(), createdAt: now)
            // The new key's file first: a crash before the old one's retirement is saved leaves two
            // active keys, of which the newer signs and both verify.
            try await kernel.keys.save(fresh)
            let retired = keyRing.rotate(to: fresh, now: now)
            try await kernel.keys.save(retired)
            let rsaRotated = try await rsa?.rotate()
            await cluster?.publishKeysChanged()
            kernel.logger.notice("signing key rotated", metadata: ["key.kid": "\(fresh.kid)", "key.retired": "\(retired.kid)", "via": "\(via)"])
            await kernel.audit.record("admin", reason: "keys rotate")
            var text = "new signing key \(fresh.kid)\nold key \(retired.kid) stays in the JWKS until the tokens it signed have expired\n"
            if let rsaRotated {
                text += "new RSA key \(rsaRotated.active) (ID tokens)\nold RSA key \(rsaRotated.retired) stays in the JWKS until the next rotation\n"
            }
            return AdminOutput(text: text)

        case .backup(let path):
            guard let journal = store as? JournalStore else {
                throw AdminError("backup copies a data folder's store; with storage.backend = postgres back up the database (pg_dump) and the key-encryption key")
            }
            let summary = try await AdminBackup.write(to: path, store: journal, keyFolder: try KeyFolder(dataFolder: dataFolder), progress: progress)
            kernel.logger.notice("backup written", metadata: ["file": "\(path)", "via": "\(via)"])
            await kernel.audit.record("admin", reason: "backup")
            return AdminOutput(text: "backup written to \(path): \(summary)\n")

        case .export(let path):
            let summary = try await AdminBackup.export(to: path, store: store, keys: kernel.keys, progress: progress)
            kernel.logger.notice("export written", metadata: ["file": "\(path)", "via": "\(via)"])
            await kernel.audit.record("admin", reason: "export")
            return AdminOutput(text: "exported to \(path): \(summary)\n")

        case .importBundle(let path):
            let summary = try await AdminBackup.importBundle(from: path, store: store, keys: kernel.keys, logger: kernel.logger, progress: progress)
            await cluster?.publishKeysChanged()
            kernel.logger.notice("export imported", metadata: ["file": "\(path)", "via": "\(via)"])
            await kernel.audit.record("admin", reason: "import")
            return AdminOutput(text: summary + "\n")

        case .importUsers(let path, let dryRun):
            guard let importUsers else { throw AdminError("this server is built without user imports (AuthdServer has them)") }
            let report = try await importUsers(path, dryRun, store, kernel.clock, progress)
            if !dryRun {
                kernel.logger.notice("users imported", metadata: ["file": "\(path)", "users": "\(report.imported)", "via": "\(via)"])
                await kernel.audit.record("admin", reason: "import-users: \(report.imported) imported")
            }
            return AdminOutput(text: report.text, exitCode: report.refused == 0 ? 0 : 1)

        case .check:
            let counts = try await store.counts()
            let (users, sessions) = (counts.users, counts.sessions)
            let config = kernel.config
            let problems = kernel.configurationProblems.all
            let warnings = try await clientWarnings() + Self.configurationWarnings(config)
            return AdminOutput(
                text: problems.map { "problem       \($0)\n" }.joined() + warnings.map { "warning       \($0)\n" }.joined() + """
                    data folder   \(dataFolder)
                    issuer        \(config.issuer)
                    audience      \(config.audience)
                    providers     \(config.providers.joined(separator: ", "))
                    mail          \(config.mail.transport)
                    sign-up       \(Self.signupLine(config.signup))
                    store         \(config.storage.backend): \(users) users, \(sessions) sessions, \(await store.isWritable ? "writable" : "NOT WRITABLE")
                    signing key   \(keyRing.active.kid)
                    served by     \(via == "admin socket" ? "a running authd (answered on the admin socket)" : "no running server; the folder opened directly")

                    """ + declarations() + Self.effectiveConfiguration(config),
                exitCode: problems.isEmpty ? 0 : 1
            )
        }
    }

    /// `signup.mode` as `check` and the console say it.
    static func signupLine(_ signup: AuthConfig.SignupSettings) -> String {
        let mode = switch signup.mode {
        case .open: "open: anyone who reaches authd can make an account"
        case .invite: "by invitation only"
        case .domains: "verified addresses at \(signup.domains.joined(separator: ", ")), and invitations"
        }
        return mode + (signup.anonymous ? "; anonymous accounts allowed" : "")
    }

    /// Clients whose redirect URI is on the issuer's host name: browsers scope cookies by host, not
    /// port, so such an app and authd can read each other's cookies (contract §13). With sign-up
    /// open, a first-party client that lets everyone in lets in anyone who makes an account (§17).
    func clientWarnings() async throws -> [String] {
        let clients = try await clients.list()
        var warnings: [String] = []
        if let issuerHost = URLComponents(string: kernel.config.issuer)?.host?.lowercased() {
            warnings += clients.compactMap { client in
                guard client.redirectURIs.contains(where: { URLComponents(string: $0)?.host?.lowercased() == issuerHost }) else { return nil }
                return "client \(client.id) (\(client.name)) redirects to \(issuerHost), the issuer's host: cookies ignore ports, so give each app its own host name"
            }
        }
        if kernel.config.signup.mode == .open {
            warnings += clients.filter { $0.firstParty && $0.allowedGroups.isEmpty }.map { client in
                "client \(client.id) (\(client.name)) is first-party and names no --allowed-groups while signup.mode is open: anyone who can reach authd can make an account and sign in to it; set signup.mode or the client's --allowed-groups"
            }
        }
        return warnings
    }

    /// What `check` warns about in the configuration itself: variables that name no key in use,
    /// and an HTTPS issuer served by neither authd's TLS nor a trusted proxy, where every client
    /// would share the proxy's address, and with it every per-network limit (contract §14).
    static func configurationWarnings(_ config: AuthConfig) -> [String] {
        var warnings = config.environment?.unused() ?? []
        if config.issuer.hasPrefix("https://"), config.tls == nil, config.trustedProxies == .none {
            warnings.append(
                "the issuer is https:// but neither http.tls nor http.trusted_proxies is set: behind a proxy every client shares its address, and so every per-network limit"
            )
        }
        return warnings
    }

    /// Every key read, the value in effect (secrets redacted, ``ConfigSecrets``) and where it came
    /// from: `default`, `file` or the variable's name.
    static func effectiveConfiguration(_ config: AuthConfig) -> String {
        guard let environment = config.environment else { return "" }
        return "configuration (value, then where it came from)\n"
            + environment.effective().map { entry in
                let shown = config.secrets.redacted(entry.path, entry.value)
                return "  \(entry.path) = \(Self.text(shown, kind: .string))  (\(entry.source))\n"
            }.joined()
    }

    /// What each provider started declares: its settings with the values in effect, its mail
    /// (and whether `DATA/templates/` overrides it), its audit events.
    func declarations() -> String {
        var out = ""
        let secrets = kernel.config.secrets
        for type in providerTypes {
            out += "provider      \(type.id)\n"
            let section = kernel.config.providerSections[type.id]
            for setting in type.settings {
                let path = "\(type.configSection).\(setting.key)"
                let value: String
                if case .environment(let variable)? = kernel.config.environment?.source(of: path),
                    let set = kernel.config.environment?.effective().first(where: { $0.path == path })?.value
                {
                    value = "\(Self.text(secrets.redacted(path, set), kind: setting.kind)) (\(variable))"
                } else {
                    value = section?.valueInFile(setting.key).map { "\(Self.text(secrets.redacted(path, $0), kind: setting.kind)) (set)" }
                        ?? "\(SettingsReference.shownDefault(setting, at: path)) (default)"
                }
                out += "  setting     \(type.configSection).\(setting.key) = \(value)\n"
            }
            for mail in type.mailTemplates {
                let overrides = kernel.mailer.templates.overrides(of: mail.name)
                out += "  mail        \(mail.name)\(overrides.isEmpty ? "" : " (overridden by \(overrides.joined(separator: ", ")))")\n"
            }
            if !type.auditEvents.isEmpty { out += "  audit       \(type.auditEvents.map(\.name).joined(separator: ", "))\n" }
        }
        return out
    }

    /// A setting's value as `check` prints it: a rate limit as `LIMIT per WINDOW s`, else its JSON.
    static func text(_ value: JSONValue, kind: Setting.Kind) -> String {
        if kind == .rateLimit, case .object(let o) = value, case .number(let l)? = o["limit"], case .number(let w)? = o["window"] {
            return "\(Int(l)) per \(Int(w)) s"
        }
        var w = JSONWriter(capacity: 64)
        w.value(value)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    private func user(_ ref: String) async throws -> UserRecord {
        let found: UserRecord? =
            if let id = UUID(uuidString: ref) { try await kernel.users.user(id: id) }
            else if let email = EmailAddress(ref) { try await kernel.users.user(email: email.value) }
            else { try await kernel.users.user(username: ref) }
        guard let found else { throw AdminError("no user \(ref) (give an id, an email or a username)") }
        return found
    }

    private func audit(_ message: Logger.Message, user: UUID, command: String) async {
        kernel.logger.notice(message, metadata: ["user.id": "\(user.lowercased)", "via": "\(via)"])
        await kernel.audit.record("admin", user: user, reason: command)
    }
}

/// A command that cannot be done, with a sentence saying why.
package struct AdminError: Error {
    let message: String
    package init(_ message: String) { self.message = message }
}
