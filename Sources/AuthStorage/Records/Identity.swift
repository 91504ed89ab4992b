/// A sign-in identity: who a provider says the user is, e.g. `("email", "a@b.c")` or `("apple", "000123.abc")`.
///
/// An identity belongs to at most one user.
public struct Identity: Codable, Hashable, Sendable {
    /// Provider id, e.g. `email`.
    public var provider: String
    /// The provider's stable id for the person (case-folded email, Apple `sub`, …).
    public var subject: String

    /// Creates an identity.
    public init(provider: String, subject: String) {
        self.provider = provider
        self.subject = subject
    }
}
