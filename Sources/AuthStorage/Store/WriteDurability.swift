/// When ``JournalStore/write(durability:_:)`` returns.
public enum WriteDurability: Sendable {
    /// After the change is fsync'ed: the default, and the only choice for anything a client is told happened.
    case synced
    /// As soon as the change is applied in memory; it goes to disk with the next batch, in order.
    ///
    /// For bookkeeping that must act at once but whose answer must not wait for a disk: a wrong code
    /// or PIN counted toward its limit. Waiting for the fsync there would make a wrong guess for a
    /// real account measurably slower than one for an account that does not exist. A crash in the
    /// few milliseconds before the batch is written forgets the count; a later synced write or
    /// ``JournalStore/waitUntilDurable()`` makes it (and everything before it) durable.
    case eventual
}
