import AuthKernel
import Foundation
import Hummingbird

/// `PUT` and `DELETE /api/v1/auth/sessions/current/push` (contract §9): this session's APNs token.
struct PushRoutes: Sendable {
    let registrations: PushRegistrations
    /// `push.apns.topics`; empty when push is not configured (any topic is then kept as given).
    let topics: [String]

    struct Body: Decodable {
        var apnsToken: String
        var environment: String?
        var topic: String?
        enum CodingKeys: String, CodingKey { case apnsToken = "apns_token", environment, topic }
    }

    func add(to api: RouterGroup<AuthRequestContext>) {
        let registrations = self.registrations, topics = self.topics
        api.put("sessions/current/push") { request, context -> Response in
            let principal = try context.requirePrincipal()
            let body = try await request.decodeJSON(as: Body.self, context: context)
            // An APNs device token is hex (32 bytes today; Apple says it may grow).
            let token = body.apnsToken.lowercased()
            guard (16...200).contains(token.utf8.count), token.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
                throw AuthError.invalidRequest("The field `apns_token` must be the device token in hex.", field: "apns_token")
            }
            let environment = body.environment ?? "production"
            guard ["production", "sandbox"].contains(environment) else {
                throw AuthError.invalidRequest("The field `environment` must be \"production\" or \"sandbox\".", field: "environment")
            }
            // Checked against push.apns.topics when APNs is configured; without it nothing is pushed anyway.
            if let topic = body.topic, topic.utf8.count > 200 || (!topics.isEmpty && !topics.contains(topic)) {
                throw AuthError.invalidRequest("The field `topic` must be one of push.apns.topics.", field: "topic")
            }
            try await registrations.register(
                .init(sessionID: principal.session.id.lowercased, token: token, environment: environment, topic: body.topic), userID: principal.user.id)
            return Response(status: .noContent)
        }
        api.delete("sessions/current/push") { _, context -> Response in
            let principal = try context.requirePrincipal()
            try await registrations.remove(userID: principal.user.id, sessionID: principal.session.id.lowercased)
            return Response(status: .noContent)
        }
    }
}
