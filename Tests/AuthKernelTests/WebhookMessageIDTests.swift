@testable import AuthdCore
import AuthStorage
import Testing

/// A delivery job that runs again (the process stopped between sending and removing it) queues
/// its webhook again: the receiver must see the same `webhook-id`, one per approval, event and
/// endpoint, to keep one.
struct WebhookMessageIDTests {
    @Test func anApprovalsEventKeepsItsIDAndOtherEventsGetFreshOnes() {
        let data: [String: JSONValue] = ["approval_id": .string("apr_1"), "user_id": .string("u")]
        let first = WebhookDispatcher.messageID("approval.requested", data, url: "https://a.example/hook")
        #expect(first.hasPrefix("msg_") && first.count > 20)
        #expect(WebhookDispatcher.messageID("approval.requested", data, url: "https://a.example/hook") == first, "the rerun's id")
        #expect(WebhookDispatcher.messageID("approval.resolved", data, url: "https://a.example/hook") != first)
        #expect(WebhookDispatcher.messageID("approval.requested", data, url: "https://b.example/hook") != first)
        #expect(WebhookDispatcher.messageID("approval.requested", ["approval_id": .string("apr_2")], url: "https://a.example/hook") != first)
        let created: [String: JSONValue] = ["user_id": .string("u")]
        #expect(WebhookDispatcher.messageID("user.created", created, url: "x") != WebhookDispatcher.messageID("user.created", created, url: "x"))
    }
}
