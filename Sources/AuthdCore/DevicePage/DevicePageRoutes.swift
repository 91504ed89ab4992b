import AuthKernel
import AuthStorage
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// `GET /device` and its forms (contract §7): a person enters the code a device shows, signs in with
/// a code mailed to them (or their password, when that provider runs), compares the code, and
/// approves or denies. Served only to loopback clients
/// or behind an `https` issuer; a `__Host-` cookie session, a CSRF token and an `Origin` check on every
/// POST; `frame-ancestors 'none'`; no script and nothing from another site.
struct DevicePageRoutes: Sendable {
    let kernel: Kernel
    let devices: DeviceAuthorizations
    let store: any AuthStore
    let issuer: IssuerName
    let productName: String
    /// Seals the cookie of a session not stored yet.
    let box: SecretBox
    /// The password provider's check (``PasswordProvider/verifiedUser``), when it runs.
    let passwordCheck: (@Sendable (_ email: String, _ password: String, _ context: AuthRequestContext) async throws -> UserRecord)?

    static let mailTemplate = "kernel.device_sign_in_code"
    static let codePurpose = "device_page_sign_in"
    static let codes = CodePolicy(ttl: 600, resendInterval: 60, maxAttempts: 5, maxFailures: 10, failureWindow: 3600)
    static let signInsPerIP = RateLimitRule(limit: 30, window: 600)
    /// New pages (a GET without a live cookie) per client network: each seals a cookie.
    static let newPagesPerNetwork = RateLimitRule(limit: 60, window: 600)

    static func registerMail(on mailer: Mailer) throws {
        try mailer.register(
            mailTemplate,
            .code(
                subject: "Your {{product_name}} code to sign in a device: {{code}}",
                lead: "To approve a device signing in to your {{product_name}} account, enter",
                tail: "It expires in {{lifetime}}. If you are not signing in a device, ignore this email: nothing happens without the code."))
    }

    func add(to router: Router<AuthRequestContext>) {
        let page = self
        router.get("device/style.css") { _, _ -> Response in
            var response = Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: DevicePageHTML.css)))
            response.headers[.cacheControl] = "public, max-age=3600"
            response.headers[.xContentTypeOptions] = "nosniff"
            return response
        }
        router.get("device") { request, context -> Response in try await page.show(request, context) }
        for action in ["start", "verify", "factor", "restart", "approve", "deny"] {
            router.post("device/\(action)") { request, context -> Response in try await page.post(action, request, context) }
        }
    }

    // MARK: - Requests

    func show(_ request: Request, _ context: AuthRequestContext) async throws -> Response {
        guard isAllowed(context) else { return Self.refusal() }
        let now = kernel.clock.now()
        var session = try await load(request, now: now)
        let isNew = session == nil
        if session == nil {
            // Nothing is stored for a visitor who has not posted (contract §12); the cookie holds it.
            try await kernel.rateLimiter.consume(
                Self.newPagesPerNetwork, key: "device.page.new:\(ClientNetwork.network(for: context.clientIP))",
                message: "Too many sign-in pages opened from this network. Wait a few minutes.")
            session = DevicePageSession.new(now: now, box: box)
        }
        var s = session!
        let prefill = request.uri.queryParameters.get("user_code").map { String($0.prefix(32)) }
        if s.step == "start", let prefill { s.userCode = prefill }
        return try await render(s, setCookie: isNew)
    }

    func post(_ action: String, _ request: Request, _ context: AuthRequestContext) async throws -> Response {
        guard isAllowed(context) else { return Self.refusal() }
        guard isSameOrigin(request, context) else { return Self.expired("This form came from another site.") }
        let now = kernel.clock.now()
        let form: OAuthParameters
        do {
            form = try OAuthParameters(
                form: Array(try await request.body.collect(upTo: context.maxUploadSize).readableBytesView), keeping: ["csrf", "user_code", "email", "code", "password", "factor", "answer"])
        } catch {
            return Self.expired("The form could not be read.")
        }
        guard var s = try await load(request, now: now), let csrf = form["csrf"],
            ConstantTime.equals(Array(csrf.utf8), Array(s.csrf.utf8))
        else { return Self.expired("This page has expired.") }

        switch (action, s.step) {
        case ("restart", _):
            s = DevicePageSession(cookie: s.cookie, csrf: s.csrf, step: "start", expiresAt: s.expiresAt)
        case ("start", "start"):
            let typed = form["user_code"] ?? ""
            let email = form["email"] ?? ""
            s.userCode = String(typed.prefix(32))
            s.email = String(email.prefix(254))
            try await kernel.rateLimiter.consume(devices.settings.lookupsPerIP, key: "device.lookup.ip:\(context.clientKey)", message: "Too many codes tried. Wait a few minutes.")
            guard let pending = try? await devices.pending(typed) else {
                return try await render(s, error: "No device is waiting for this code. Check the code on the device, or start again there.", status: .badRequest)
            }
            guard let address = EmailAddress(email) else {
                return try await render(s, error: "That is not a valid email address.", status: .badRequest)
            }
            try await kernel.rateLimiter.consume(Self.signInsPerIP, key: "device.page.ip:\(context.clientKey)", message: "Too many sign-ins from this network. Wait a few minutes.")
            s.userCode = pending.userCode
            s.email = address.value
            if let password = form["password"], !password.isEmpty, let passwordCheck {
                let user: UserRecord
                do {
                    user = try await passwordCheck(address.value, password, context)
                } catch let error as AuthError {
                    let message =
                        switch error.code {
                        case "RATE_LIMIT_EXCEEDED": "Too many tries. Wait a few minutes, then try again."
                        case "EMAIL_NOT_VERIFIED": "Verify your email address first (we have emailed you a code for it), or leave the password empty and sign in with a code."
                        default: "The email address or the password is wrong."
                        }
                    return try await render(s, error: message, status: error.status)
                }
                return try await signedIn(user, amr: ["password"], &s, context)
            }
            s.step = "code"
            // Known and unknown addresses get the same page after the same work — a code stored, a
            // mail job queued, delivery not waited for — so neither the page nor its timing says who
            // has an account (contract §12); only a known, verified address's job sends anything.
            let user = try await kernel.users.user(email: address.value)
            let values = ["lifetime": MailTemplate.lifetime(Self.codes.ttl)]
            do {
                let code = try await kernel.codes.issue(purpose: Self.codePurpose, key: address.value, policy: Self.codes)
                if let user, user.emailVerified, user.disabledAt == nil {
                    try await kernel.mailer.send(template: Self.mailTemplate, to: address.value, values: values, code: code, waitForDelivery: false)
                } else {
                    try await kernel.mailer.sendDecoy(template: Self.mailTemplate, values: values, code: code)
                }
            } catch let error as AuthError where error.status == .tooManyRequests {
                // A code went out a moment ago: that one works.
            }
        case ("verify", "code"):
            guard let email = s.email else { return Self.expired("This page has expired.") }
            do {
                try await kernel.rateLimiter.consume(Self.signInsPerIP, key: "device.page.ip:\(context.clientKey)", message: "Too many sign-ins from this network. Wait a few minutes.")
                try await kernel.codes.verify(purpose: Self.codePurpose, key: email, code: String((form["code"] ?? "").prefix(16)), policy: Self.codes)
            } catch let error as AuthError {
                await kernel.audit.record("sign_in_failed", provider: "device_page", account: email, reason: error.code)
                let message = error.status == .tooManyRequests ? "Too many tries. Wait a few minutes, then start again." : "That code is wrong or has expired."
                return try await render(s, error: message, status: error.status)
            }
            guard let user = try await kernel.users.user(email: email) else { return Self.expired("This page has expired.") }
            return try await signedIn(user, amr: ["email"], &s, context)
        case ("factor", "factor"):
            guard let userID = s.userID, let name = form["factor"], s.factors.contains(name), let factor = kernel.signInHooks.factor(named: name) else {
                return Self.expired("This page has expired.")
            }
            let answer = String((form["answer"] ?? "").prefix(64))
            do {
                try await kernel.rateLimiter.consume(Self.signInsPerIP, key: "device.page.ip:\(context.clientKey)", message: "Too many sign-ins from this network. Wait a few minutes.")
                let (challenge, user) = try await kernel.sessions.pendingChallenge(s.challengeToken)
                guard user.id == userID else { return Self.expired("This page has expired.") }
                let reservation = try await kernel.sessions.reserveAnswer(challenge, network: ClientNetwork.network(for: context.clientIP))
                guard try await factor.verify(.string(answer), for: user, challenge: challenge) else {
                    await kernel.audit.record("second_factor_failed", provider: name, user: user.id)
                    throw AuthError.invalidCode(attemptsRemaining: reservation.remaining)
                }
                try await kernel.sessions.releaseAnswer(challenge, reservation)
                try await kernel.sessions.consumeChallenge(challenge)
            } catch let error as AuthError {
                let message: String
                switch error.code {
                case "INVALID_CODE":
                    let left = { if case .number(let n)? = error.details?["attempts_remaining"] { Int(n) } else { 0 } }()
                    guard left > 0 else { fallthrough }
                    message = "That code is wrong. \(left) \(left == 1 ? "try" : "tries") left."
                case "INVALID_CHALLENGE":
                    s = DevicePageSession(cookie: s.cookie, csrf: s.csrf, step: "start", expiresAt: s.expiresAt)
                    try await save(s)
                    return try await render(s, error: "That took too long or too many tries. Start again.", status: .unauthorized)
                case "RATE_LIMIT_EXCEEDED": message = "Too many tries. Wait a few minutes, then try again."
                default: message = "That did not work. Try again."
                }
                return try await render(s, error: message, status: error.status)
            }
            await kernel.audit.record("sign_in", provider: "device_page", user: userID, reason: name)
            s.step = "confirm"
            s.factors = []
        case ("approve", "confirm"), ("deny", "confirm"):
            guard let userID = s.userID, let code = s.userCode else { return Self.expired("This page has expired.") }
            let approve = action == "approve"
            let pending: DeviceAuthorizations.Pending
            do {
                pending = try await devices.answer(code, approve: approve, by: userID)
            } catch let error as AuthError {
                s = DevicePageSession(cookie: s.cookie, csrf: s.csrf, step: "start", expiresAt: s.expiresAt)
                try await save(s)
                return try await render(s, error: error.status == .notFound ? "This code has expired. Start again on the device." : "This code has been answered already.", status: error.status)
            }
            if approve, let user = try await kernel.users.user(id: userID) {
                let label = [pending.device.name, pending.device.platform].compactMap { $0 }.joined(separator: ", ")
                await kernel.users.noticeMethodAdded(
                    user, method: "a device signed in with a code (\(label.isEmpty ? "unnamed" : label))", credential: .provided(kind: "device", reference: ""))
            }
            let key = DevicePageSession.key(s.cookie)
            try await store.write([.code(purpose: DevicePageSession.purpose, key: key)]) {
                $0.deleteCode(id: CodeRecord.id(purpose: DevicePageSession.purpose, key: key))
            }
            var response = Self.html(DevicePageHTML.page(.done(approved: approve), csrf: "", productName: productName))
            response.setCookie(Self.cookie("", maxAge: 0))
            return response
        default:
            return Self.expired("This page has expired.")
        }
        try await save(s)
        // Post, redirect, get: a reload does not send the form again.
        return Response(status: .seeOther, headers: [.location: "/device", .cacheControl: "no-store"])
    }

    /// The person proved who they are: on to the confirmation, or first to the second factor the
    /// sign-in policies ask for (a code from an app, a recovery code, an emailed code; a passkey
    /// needs an app), unless the account is disabled or a policy refuses.
    func signedIn(_ user: UserRecord, amr: [String], _ s: inout DevicePageSession, _ context: AuthRequestContext) async throws -> Response {
        guard user.disabledAt == nil else { return Self.expired("This page has expired.") }
        let demanded: [String]
        do {
            demanded = try await kernel.sessions.secondFactorsDemanded(of: user, amr: amr, device: .none)
        } catch is AuthError {
            return try await restart(&s, error: "This account cannot approve devices from this page. Approve it from an app you are signed in to.")
        }
        guard !demanded.isEmpty else {
            await kernel.audit.record("sign_in", provider: "device_page", user: user.id, reason: amr.first)
            s.userID = user.id
            s.step = "confirm"
            try await save(s)
            // Post, redirect, get: a reload does not send the form again.
            return Response(status: .seeOther, headers: [.location: "/device", .cacheControl: "no-store"])
        }
        let usable = demanded.filter { DevicePageHTML.factorLabels[$0] != nil }
        guard !usable.isEmpty else {
            return try await restart(&s, error: "Your account signs in with a passkey here. Approve the device from an app you are signed in to.")
        }
        _ = try await kernel.sessions.startChallenge(
            user, amr: amr, device: .none, factors: usable, requireUnchangedCredentials: false, token: s.challengeToken)
        s.userID = user.id
        s.factors = usable
        s.step = "factor"
        try await save(s)
        return Response(status: .seeOther, headers: [.location: "/device", .cacheControl: "no-store"])
    }

    func restart(_ s: inout DevicePageSession, error: String) async throws -> Response {
        s = DevicePageSession(cookie: s.cookie, csrf: s.csrf, step: "start", expiresAt: s.expiresAt)
        try await save(s)
        return try await render(s, error: error, status: .forbidden)
    }

    // MARK: - Pieces

    func render(_ s: DevicePageSession, error: String? = nil, status: HTTPResponse.Status = .ok, setCookie: Bool = false) async throws -> Response {
        let step: DevicePageHTML.Step
        switch s.step {
        case "code": step = .code(email: s.email ?? "")
        case "factor": step = .factor(s.factors, email: s.email ?? "")
        case "confirm":
            guard let code = s.userCode, let pending = try? await devices.pending(code) else {
                let restarted = DevicePageSession(cookie: s.cookie, csrf: s.csrf, step: "start", expiresAt: s.expiresAt)
                try await save(restarted)
                return try await render(restarted, error: "This code has expired or been answered. Start again on the device.", status: .gone)
            }
            step = .confirm(pending, email: s.email ?? "")
        default: step = .start(userCode: s.userCode ?? "", email: s.email ?? "", password: passwordCheck != nil)
        }
        var response = Self.html(DevicePageHTML.page(step, csrf: s.csrf, error: error, productName: productName), status: status)
        if setCookie { response.setCookie(Self.cookie(s.cookie, maxAge: DevicePageSession.lifetime)) }
        return response
    }

    static func cookie(_ value: String, maxAge: Int) -> Cookie {
        // Secure always: browsers refuse a __Host- cookie without it, and treat loopback as secure.
        Cookie(name: DevicePageSession.cookieName, value: value, maxAge: maxAge, path: "/", secure: true, httpOnly: true, sameSite: .strict)
    }

    static func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        var response = Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text)))
        response.headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[.cacheControl] = "no-store"
        response.headers[.xContentTypeOptions] = "nosniff"
        // same-origin, not no-referrer: with no-referrer browsers send `Origin: null` on the page's own forms.
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        return response
    }

    static func expired(_ reason: String) -> Response {
        html(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>Expired</title><link rel=\"stylesheet\" href=\"/device/style.css\"></head><body><main><h1>Start again</h1><p class=\"error\" role=\"alert\" id=\"error\">\(DevicePageHTML.escape(reason))</p><p><a href=\"/device\">Sign in a device</a></p></main></body></html>\n",
            status: .forbidden)
    }

    static func refusal() -> Response {
        html(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>HTTPS only</title></head><body><main><h1>Use HTTPS</h1><p>This page is served only over HTTPS (or to this machine itself).</p></main></body></html>\n",
            status: .forbidden)
    }

    /// Over HTTPS (the issuer says clients reach authd by https, through a proxy or its own TLS) or from this machine.
    func isAllowed(_ context: AuthRequestContext) -> Bool {
        issuer.value.hasPrefix("https://") || Self.isLoopback(context.clientIP)
    }

    static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address == "::1" || address.hasPrefix("::ffff:127.")
    }

    /// The form was posted by this page: `Origin` is the issuer's, the verification URI's, or, for a
    /// loopback client, this host's as it was asked for.
    func isSameOrigin(_ request: Request, _ context: AuthRequestContext) -> Bool {
        guard let origin = request.headers[.origin] else { return false }
        var allowed = [Self.origin(issuer.value)]
        if let uri = devices.settings.verificationURI { allowed.append(Self.origin(uri)) }
        if Self.isLoopback(context.clientIP), let host = request.head.authority ?? request.headers[HTTPField.Name("Host")!] {
            allowed.append("http://" + host)
        }
        return allowed.contains(origin)
    }

    /// `scheme://host[:port]` of a URL.
    static func origin(_ url: String) -> String {
        guard let c = URLComponents(string: url), let scheme = c.scheme, let host = c.host else { return url }
        return "\(scheme)://\(host)\(c.port.map { ":\($0)" } ?? "")"
    }

    func load(_ request: Request, now: Date) async throws -> DevicePageSession? {
        guard let cookie = request.cookies[DevicePageSession.cookieName]?.value, !cookie.isEmpty,
            cookie.utf8.count <= DevicePageSession.maxCookieLength
        else { return nil }
        let key = DevicePageSession.key(cookie)
        let record = try await store.read([.code(purpose: DevicePageSession.purpose, key: key)]) { $0.code(purpose: DevicePageSession.purpose, key: key) }
        guard let record else { return DevicePageSession.unsealed(cookie, box: box, now: now) }
        guard record.expiresAt > now else { return nil }
        return DevicePageSession(cookie: cookie, record: record)
    }

    func save(_ s: DevicePageSession) async throws {
        let record = s.record
        try await store.write([.code(purpose: record.purpose, key: record.key)]) { $0.put(record) }
    }
}
