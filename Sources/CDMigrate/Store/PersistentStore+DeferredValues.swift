/// Buffered instances whose values were put off (`DeferredValues`): marking them, and writing
/// them with the insert buffer.
extension PersistentStore {
    /// Puts off the values of `object`, an instance inserted into this store and still buffered
    /// with no attribute set on it: it becomes a fault whose first access calls `writer.materialize`,
    /// and the buffer writes its row through `writer.writeRows`.
    /// False when the instance is not such a one (nothing is then changed).
    func deferValues(of object: ManagedObject, sourceKey: Int64, writer: any DeferredValuesWriter) -> Bool {
        guard object.isBufferedInsert, !object.hasSetAttributes, !object.isFault, object.deferredValues == nil,
            !isClosed,
            object.storeReference === objectReference
        else { return false }
        object.deferredValues = DeferredValues(writer: writer, sourceKey: sourceKey)
        object.isFault = true
        deferredRowCount += 1
        return true
    }

    /// Writes the buffered instances whose values were put off (before the rest of the buffer):
    /// each writer's rows at once, by SQL; the rows it declines, and rows with a relationship
    /// column set meanwhile, have their values computed and stay in the buffer.
    func writeDeferredRows() throws {
        guard deferredRowCount > 0 else { return }
        var written = false
        defer {
            // Rows written leave the buffer, and the count is what is left put off, even when a
            // later group fails: a later write neither writes a row twice nor one without its values.
            if written {
                pending.removeAll { !$0.object.isBufferedInsert }
                pendingIndex.removeAll(keepingCapacity: true)
                for (i, row) in pending.enumerated() { pendingIndex[key(row.object)] = i }
            }
            deferredRowCount = pending.reduce(0) { $0 + ($1.object.deferredValues == nil ? 0 : 1) }
        }
        var groups: [(writer: any DeferredValuesWriter, rows: [(object: ManagedObject, sourceKey: Int64)])] = []
        for row in pending {
            guard let deferred = row.object.deferredValues else { continue }
            if !row.links.isEmpty {
                try row.object.fireFault()  // its values computed now
                continue
            }
            // Rows of one writer and entity follow one another: the last group first.
            if let last = groups.indices.last, groups[last].writer === deferred.writer,
                groups[last].rows[0].object.entity === row.object.entity
            {
                groups[last].rows.append((row.object, deferred.sourceKey))
            } else if let i = groups.firstIndex(where: {
                $0.writer === deferred.writer && $0.rows[0].object.entity === row.object.entity
            }) {
                groups[i].rows.append((row.object, deferred.sourceKey))
            } else {
                groups.append((deferred.writer, [(row.object, deferred.sourceKey)]))
            }
        }
        guard !groups.isEmpty else { return }
        try beginIfNeeded()
        for group in groups {
            if try group.writer.writeRows(group.rows, to: self) {
                for (object, _) in group.rows {
                    // An ordinary fault of its row from now on.
                    object.deferredValues = nil
                    object.isBufferedInsert = false
                }
                written = true
            } else {
                for (object, _) in group.rows { try object.fireFault() }
            }
        }
    }
}
