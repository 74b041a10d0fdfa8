/// Pairs the elements (entities or properties) of a destination with those of a source, as Core
/// Data's inference does with renaming identifiers.
///
/// A destination element takes, in this order:
/// 1. the source element whose name is its renaming identifier (the identifier set to the name in
///    the previous version, as Apple's documentation tells);
/// 2. the source element with the same renaming identifier (the identifier as a canonical name
///    kept across versions, so that v1 → v3 works as well as v2 → v3);
/// 3. the source element with its own name, unless an earlier rule gave that one to another
///    destination element (then this one is new: "X renamed to Y and a new X added").
///
/// Two destination elements claiming the same source element by their renaming identifiers is a
/// conflict the caller reports.
struct RenamingMatch<Element: AnyObject> {
    /// For each destination element (in order): its source element, or nil when it is new.
    var sources: [Element?] = []
    /// Source elements claimed by more than one destination element by renaming identifier:
    /// (source, the destination elements).
    var conflicts: [(Element, [Element])] = []

    init(destination: [Element], source: [Element], name: (Element) -> String, renamingIdentifier: (Element) -> String?)
    {
        var byName: [String: Element] = [:]
        var byIdentifier: [String: Element] = [:]
        for element in source {
            if byName[name(element)] == nil { byName[name(element)] = element }
            if let id = renamingIdentifier(element), byIdentifier[id] == nil { byIdentifier[id] = element }
        }
        sources = [Element?](repeating: nil, count: destination.count)
        var claimedBy: [ObjectIdentifier: [Element]] = [:]
        // Rules 1 and 2: renaming identifiers.
        for (i, element) in destination.enumerated() {
            guard let id = renamingIdentifier(element), id != name(element) || byName[id] == nil else { continue }
            if let match = byName[id] ?? byIdentifier[id] {
                sources[i] = match
                claimedBy[ObjectIdentifier(match), default: []].append(element)
            }
        }
        // Rule 3: names, for the rest.
        for (i, element) in destination.enumerated() where sources[i] == nil {
            if let match = byName[name(element)], claimedBy[ObjectIdentifier(match)] == nil {
                sources[i] = match
                claimedBy[ObjectIdentifier(match)] = [element]
            }
        }
        for element in source {
            if let claimants = claimedBy[ObjectIdentifier(element)], claimants.count > 1 {
                conflicts.append((element, claimants))
            }
        }
    }
}
