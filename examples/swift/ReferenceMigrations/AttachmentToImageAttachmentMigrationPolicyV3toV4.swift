import CDMigrate

/// Scenario 4's policy, the course's `AttachmentToImageAttachmentMigrationPolicyV3toV4`: makes an
/// ImageAttachment (a child entity of Attachment), applies the mapping's own attribute value
/// expressions (dateCreated, image), sets width and height from the PNG header of the image, and
/// sets caption to the first 80 characters of the note's body.
///
/// Unlike the course's `body.substring(to: 80)`, a body shorter than 80 characters (or no note at
/// all) works: the caption is then the whole body (or empty). Characters are Swift Characters, so
/// an emoji or an accented letter is never cut in half. An image that is not a PNG leaves width
/// and height at 0.
public final class AttachmentToImageAttachmentMigrationPolicyV3toV4: EntityMigrationPolicy {
    public static let name = "AttachmentToImageAttachmentMigrationPolicyV3toV4"
    public static let captionLength = 80

    public override init() { super.init() }

    public override func createDestinationInstances(forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) throws {
        let newAttachment = try manager.createDestinationInstance(entityName: "ImageAttachment")
        try manager.applyAttributeMappings(of: mapping, source: sInstance, destination: newAttachment)
        if case .binary(let bytes) = try sInstance.value(forKey: "image"), let size = PNGImage.size(of: bytes) {
            try newAttachment.setValue(.double(Double(size.width)), forKey: "width")
            try newAttachment.setValue(.double(Double(size.height)), forKey: "height")
        }
        let body = try sInstance.value(forKeyPath: "note.body").stringValue ?? ""
        try newAttachment.setValue(.string(String(body.prefix(Self.captionLength))), forKey: "caption")
        try manager.associate(sourceInstance: sInstance, withDestinationInstance: newAttachment, for: mapping)
    }
}
