/// A second-factor answer's place, taken before the answer is checked
/// (``SessionService/reserveAnswer(_:network:)``).
package struct AnswerReservation: Sendable, Equatable {
    /// The challenge's answers left after this one.
    package var remaining: Int
    /// The slot taken in the user's wrong-answer budget; given back when the answer is right.
    package var slot: SecondFactorFailure
}

/// One slot of a user's wrong-second-factor budget: when, and from which client network.
package struct SecondFactorFailure: Codable, Sendable, Equatable {
    /// Unix seconds.
    package var at: Double
    /// ``ClientNetwork/network(for:)`` of the answering client.
    package var network: String
}
