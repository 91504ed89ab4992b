import Hummingbird
import HTTPTypes
import Metrics

/// Counts and times every request under Prometheus-style names: `authd_http_requests_total` and
/// `authd_http_request_duration_seconds`, by route (the matched route's template, never the raw
/// path a client chose), method and status. Methods outside HTTP's usual set count as `other`.
struct HTTPMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    static var methods: Set<HTTPRequest.Method> { [.get, .post, .put, .patch, .delete, .head, .options] }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let method = Self.methods.contains(request.method) ? request.method.rawValue : "other"
        do {
            let response = try await next(request, context)
            record(route: context.endpointPath ?? "unmatched", method: method, status: response.status.code, since: started)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            record(route: context.endpointPath ?? "unmatched", method: method, status: status, since: started)
            throw error
        }
    }

    private func record(route: String, method: String, status: Int, since started: ContinuousClock.Instant) {
        Counter(label: "authd_http_requests_total", dimensions: [("route", route), ("method", method), ("status", String(status))]).increment()
        let elapsed = ContinuousClock.now - started
        Timer(label: "authd_http_request_duration_seconds", dimensions: [("route", route), ("method", method)], preferredDisplayUnit: .seconds)
            .recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }
}
