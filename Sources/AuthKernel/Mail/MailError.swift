/// Why mail was not sent.
package enum MailError: Error, CustomStringConvertible, Sendable, Equatable {
    /// An address or name holds CR, LF or another control character: refused before anything is sent.
    case headerInjection(field: String)
    /// Worth retrying: a 4xx reply, a network failure, a timeout.
    case transient(String)
    /// Not worth retrying: a 5xx reply, a refused recipient.
    case permanent(String)

    package var description: String {
        switch self {
        case .headerInjection(let field): "the \(field) header holds a control character"
        case .transient(let reason): "temporary failure: \(reason)"
        case .permanent(let reason): "permanent failure: \(reason)"
        }
    }
}
