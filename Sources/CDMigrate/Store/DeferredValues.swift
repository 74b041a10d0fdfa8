/// The attribute values of an inserted instance that are still to be computed: the instance was
/// made and its values were asked for (a mapping's attribute mappings applied to it), but nothing
/// has read them yet, so they are computed only when something does — or written straight into
/// its row by SQL with the insert buffer (`DeferredValuesWriter`), never computed one by one.
///
/// Until then the instance is a fault (`ManagedObject.isFault`): the first access to one of its
/// attributes computes them (`DeferredValuesWriter.materialize`), as a fault's first access reads
/// its row; once its row is written it is an ordinary fault of that row.
struct DeferredValues {
    let writer: any DeferredValuesWriter
    /// The primary key of the source row the values are computed from (the source instance itself
    /// is not kept: a buffer's worth of them would stay in memory until it is written).
    let sourceKey: Int64
}

/// Computes, or writes by SQL, the values of instances whose values were put off (`DeferredValues`).
protocol DeferredValuesWriter: AnyObject {
    /// Computes the values of `object` from its source row and sets them, as it would have done at once.
    func materialize(_ object: ManagedObject, _ deferred: DeferredValues) throws

    /// Writes the rows of `objects` (inserted, buffered, of one entity, their values put off by
    /// this writer; each with its source) into `store` with their values, in the open transaction.
    /// False when it wrote nothing (and left no row behind): the store then computes their
    /// values one by one and writes them as other buffered instances.
    func writeRows(_ objects: [(object: ManagedObject, sourceKey: Int64)], to store: PersistentStore) throws -> Bool
}
