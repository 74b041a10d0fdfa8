@_spi(_Unicode) import Swift
import CDMigrate

/// Scenario 1's policy (NotaToNota): makes the destination Nota itself, copies contenido, fecha
/// and etiquetas with the mapping's own value expressions, and links the note to the Categoria
/// of its old `categoria` string, creating that Categoria the first time the string is seen.
///
/// The name → Categoria table lives in the policy: the manager makes one policy object per entity
/// mapping and pass, so it lasts across every note of the migration. A nil or empty `categoria`
/// means "no category".
///
/// Names are Unicode NFC (examples/1-notas-categorias/README.md): "Música" typed precomposed and
/// "Mu\u{301}sica" typed with a combining accent are one Categoria, stored as the NFC form, as
/// in C and Python. Swift's `==` already treats the two as equal; the stored text is made NFC
/// explicitly (the standard library's NFC, reached through its `_Unicode` SPI).
public final class CrearCategoriasMigrationPolicy: EntityMigrationPolicy {
    public static let name = "CrearCategoriasMigrationPolicy"
    private var categorias: [String: ManagedObject] = [:]

    public override init() { super.init() }

    public override func createDestinationInstances(forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) throws {
        let nota = try manager.createDestinationInstance(entityName: "Nota")
        try manager.applyAttributeMappings(of: mapping, source: sInstance, destination: nota)
        if let text = try sInstance.string("categoria"), !text.isEmpty {
            let nombre = Self.nfc(text)
            let categoria: ManagedObject
            if let existing = categorias[nombre] {
                categoria = existing
            } else {
                categoria = try manager.createDestinationInstance(entityName: "Categoria")
                try categoria.setValue(.string(nombre), forKey: "nombre")
                categorias[nombre] = categoria
            }
            try nota.add([categoria], toKey: "categorias")
        }
        try manager.associate(sourceInstance: sInstance, withDestinationInstance: nota, for: mapping)
    }

    /// The NFC form of a string.
    public static func nfc(_ text: String) -> String { String(decoding: text._nfcCodeUnits, as: UTF8.self) }

    public override func end(_ mapping: EntityMapping, manager: MigrationManager) throws {
        categorias = [:]
    }
}
