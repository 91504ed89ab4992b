/// Where a store hands an export's records when it streams them (see ``AuthStore/exportRecords(into:)``).
package protocol StoreExportSink: AnyObject, Sendable {
    /// Called once, before any record: how many records follow, and of them users and sessions.
    func begin(records: Int, users: Int, sessions: Int) throws
    /// A batch of records, each a put.
    func records(_ batch: [StoreChange]) throws
}
