import AuthKernel
import AuthStorage
import Foundation
import Hummingbird

/// A signed-in app's side of device sign-in (contract §7): look at a user code's request, approve
/// or deny it. Limited sessions never get here (``BearerAuthenticator``); guessing codes is limited
/// per session and per client network.
struct DeviceRoutes: Sendable {
    let kernel: Kernel
    let devices: DeviceAuthorizations

    /// An approval's optional body: the approving session's refresh token, the proof of contract §12
    /// when the session is not fresh.
    struct ApproveBody: Decodable {
        var refreshToken: String?
        enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
    }

    func add(to api: RouterGroup<AuthRequestContext>) {
        let kernel = self.kernel, devices = self.devices

        @Sendable func lookup(_ context: AuthRequestContext) async throws -> (Principal, String) {
            let principal = try context.requirePrincipal()
            let message = "Too many device codes tried. Wait before trying again."
            try await kernel.rateLimiter.consume(
                [
                    RateLimitCharge(devices.settings.lookupsPerSession, key: "device.lookup:\(principal.session.id.lowercased)"),
                    RateLimitCharge(devices.settings.lookupsPerIP, key: "device.lookup.ip:\(context.clientKey)"),
                ], message: message)
            return (principal, context.parameters.get("user_code") ?? "")
        }

        api.get("device/{user_code}") { _, context -> Response in
            let (_, code) = try await lookup(context)
            let pending = try await devices.pending(code)
            var w = JSONWriter(capacity: 256)
            w.beginObject()
            w.key("user_code"); w.string(pending.userCode)
            w.key("client_id"); w.string(pending.clientID)
            w.key("device_name"); w.string(pending.device.name)
            w.key("platform"); w.string(pending.device.platform)
            w.key("created_at"); w.string(Timestamp.string(pending.createdAt))
            w.key("expires_at"); w.string(Timestamp.string(pending.expiresAt))
            w.endObject()
            return w.response()
        }

        api.post("device/{user_code}/approve") { request, context -> Response in
            let (principal, code) = try await lookup(context)
            let body = try await request.decodeJSONIfPresent(as: ApproveBody.self, context: context)
            try await kernel.sessions.requireApprovalProof(principal, refreshToken: body?.refreshToken)
            let pending = try await devices.answer(code, approve: true, by: principal.user.id, session: principal.session.id)
            let label = [pending.device.name, pending.device.platform].compactMap { $0 }.joined(separator: ", ")
            await kernel.users.noticeMethodAdded(
                principal.user, method: SignInMethodNotices.catalogMethod("device.method_added", "device", label, otherwise: "device.unnamed"), credential: .provided(kind: "device", reference: ""))
            return Response(status: .noContent)
        }

        api.post("device/{user_code}/deny") { _, context -> Response in
            let (principal, code) = try await lookup(context)
            _ = try await devices.answer(code, approve: false, by: principal.user.id, session: principal.session.id)
            return Response(status: .noContent)
        }
    }
}
