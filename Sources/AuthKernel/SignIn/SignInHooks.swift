import Synchronization

/// The policies and second factors every sign-in passes through (see ``SignInPolicy`` and
/// ``SecondFactor``), in registration order. Providers register theirs when they are created.
public final class SignInHooks: Sendable {
    private let state = Mutex<(policies: [any SignInPolicy], factors: [any SecondFactor])>(([], []))

    /// Creates an empty set.
    package init() {}

    /// Adds a policy; it runs after those registered before it.
    public func register(_ policy: any SignInPolicy) { state.withLock { $0.policies.append(policy) } }

    /// Adds a second factor; a later one with the same name replaces it.
    public func register(_ factor: any SecondFactor) {
        state.withLock { state in
            state.factors.removeAll { $0.name == factor.name }
            state.factors.append(factor)
        }
    }

    /// The policies.
    package var policies: [any SignInPolicy] { state.withLock { $0.policies } }

    /// The second factors.
    package var factors: [any SecondFactor] { state.withLock { $0.factors } }

    /// Everything `user` has enrolled, factor by factor (``SecondFactor/enrollments(for:)``).
    public func enrollments(for user: UserRecord) -> [SecondFactorEnrollment] {
        factors.flatMap { $0.enrollments(for: user) }
    }

    /// Whether `user` has set up a second factor other than single-use codes (a TOTP app, a passkey).
    public func hasSecondFactor(_ user: UserRecord) -> Bool {
        enrollments(for: user).contains { $0.remaining == nil }
    }

    /// Removes every second factor `user` has enrolled (``SecondFactor/removeAll(from:)``).
    public func removeSecondFactors(from user: inout UserRecord) {
        for factor in factors { factor.removeAll(from: &user) }
    }

    /// The factor named `name`, if registered.
    package func factor(named name: String) -> (any SecondFactor)? { factors.first { $0.name == name } }
}
