import ArgumentParser
import CDMigrate
import FoundationEssentials

/// `cdmigrate plan`: the steps a progressive migration of a store would take, and why.
struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Show the version-by-version migration a store needs, without running it.",
        discussion: """
            The store's version is the model version of --models whose entity version hashes equal \
            the store's metadata (Core Data's mergedModel(from:forStoreMetadata:)); no match is error \
            134130, listing the store's hashes and how each version differs. From there each step \
            goes to the next version in the set's order (natural order of the version names, the \
            current version last, and the steps mapping models record before either; an \
            .xcdatamodeld's or a JSON folder's current version is the default target). A mapping \
            model straight from a version to the target is taken first (as Core Data finds it for the \
            current model); a step a mapping model records over versions between is taken as it is.

            For each step, the mapping models that record the step's versions are used: a JSON \
            mapping's entity version hashes (or its "sourceModel"/"destinationModel" version names), the \
            entity hashes of the models an Xcode mapping embeds (else the versions its model paths \
            name). Mapping models are looked for beside the model set and in every --mappings folder. Several run as passes in file-name \
            order, unless migration-passes.json lists them. A step without one uses Core Data's \
            inferred mapping; when a change cannot be inferred the error names entity, property and rule.

            --dot prints a Graphviz digraph: versions as nodes (the store's version highlighted), a solid \
            edge per step with mapping models, a dashed one per inferred step.

            Only the store's metadata is read.

            \(ExitStatus.table)
            """
    )

    @Argument(help: ArgumentHelp("The store to plan for.", valueName: "store"), completion: .file())
    var store: String

    @Option(
        name: .customLong("models"),
        help: ArgumentHelp(
            "The model set: an .xcdatamodeld, a folder of JSON models or a .momd, with mapping models beside.",
            valueName: "path"), completion: .file())
    var modelSet: String

    @OptionGroup var mappings: MappingFolderOptions

    @Option(
        name: .customLong("to-version"),
        help: ArgumentHelp("The version to reach (default: the current one).", valueName: "name"))
    var targetVersion: String?

    @Flag(
        name: .customLong("no-fuse"),
        help: "Plan every step to run on its own instead of fusing steps without policies into one pass.")
    var noFuse = false

    @Flag(help: "Print the plan as JSON on standard output.")
    var json = false

    @Flag(help: "Print the plan as a Graphviz digraph.")
    var dot = false

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        if json && dot { throw ValidationError("give --json or --dot, not both") }
    }

    func run() throws {
        let output = Output(json: json, quiet: quiet)
        do {
            let set = try ModelSet(contentsOf: modelSet, mappingFolders: mappings.folders)
            let plan = try MigrationPlan(storeAt: store, models: set, targetVersion: targetVersion)
            // The plan's warnings, then each step's models' and mapping models' (as migrate prints them).
            let warnings = try plan.allWarnings()
            for warning in warnings { output.warning(warning) }
            if dot { return print(PlanCommand.dot(plan, set)) }
            output.line("store \(store) is at version \(plan.storeVersionName)")
            output.line(
                "target version \(plan.targetVersionName)\(plan.targetVersionName == set.currentVersionName ? " (current)" : "")"
            )
            if plan.isAtTarget {
                output.line("nothing to migrate")
            } else {
                output.line("\(plan.stages.count) step\(plan.stages.count == 1 ? "" : "s"):")
                for (i, stage) in plan.stages.enumerated() {
                    let what =
                        stage.isInferred
                        ? (stage.isDirect
                            ? "inferred directly (lightweight, over the versions between)" : "inferred (lightweight)")
                        : stage.mappingModelNames.joined(separator: " then ")
                    output.line("  \(i + 1). \(stage.sourceVersionName) → \(stage.destinationVersionName): \(what)")
                    output.line("     why: \(stage.reason)")
                    if !stage.policyNames.isEmpty {
                        output.line("     policies: \(stage.policyNames.joined(separator: ", "))")
                    }
                }
                PlanCommand.printPasses(plan.passes(fusing: !noFuse), output)
                switch plan.directStep {
                case .inferable(let stage)?:
                    output.line(
                        "or one step, as Core Data's automatic migration: \(stage.sourceVersionName) → \(stage.destinationVersionName) inferred directly"
                    )
                case .notInferable(let step, let why)?:
                    output.line("Core Data's automatic migration (one step, \(step)) could not infer it: \(why)")
                case nil:
                    break
                }
            }
            output.document(try PlanCommand.object(plan, set, fusing: !noFuse))
        } catch {
            let error = MigrationError.from(error)
            output.error(error)
            output.document(["ok": false, "store": store, "error": Output.errorObject(error)])
            throw ExitStatus(error).exitCode
        }
    }

    /// `plan --json`: the plan's one JSON form (docs/cli.md) with `"ok": true`.
    static func object(_ plan: MigrationPlan, _ set: ModelSet, fusing: Bool = true) throws -> [String: Any] {
        var object = try plan.json(in: set, fusing: fusing).dictionaryValue
        object["ok"] = true
        return object
    }

    /// How the steps run: fused passes with their steps, and why a step is not fused with the next.
    static func printPasses(_ passes: [ChainPass], _ output: Output) {
        guard passes.contains(where: { $0.isFused }) else {
            if passes.count > 1 {
                output.line("each step runs on its own:")
                for pass in passes { if let why = pass.notFusedWithNext { output.line("  not fused: \(why)") } }
            }
            return
        }
        output.line("\(passes.count) pass\(passes.count == 1 ? "" : "es"):")
        for (i, pass) in passes.enumerated() {
            let steps =
                pass.isFused
                ? "steps \(pass.steps.lowerBound + 1)–\(pass.steps.upperBound) fused"
                : "step \(pass.steps.lowerBound + 1)"
            output.line(
                "  \(i + 1). \(pass.stage.sourceVersionName) → \(pass.stage.destinationVersionName): \(steps)")
            if let why = pass.notFusedWithNext { output.line("     not fused with the next: \(why)") }
        }
    }

    /// The set's versions as nodes, the plan's steps as edges (dashed when inferred).
    static func dot(_ plan: MigrationPlan, _ set: ModelSet) -> String {
        func quoted(_ text: String) -> String {
            "\"" + text.flatMap { $0 == "\\" || $0 == "\"" ? ["\\", $0] : [$0] } + "\""
        }
        var lines = ["digraph migration {", "  rankdir=LR;", "  node [shape=box];"]
        for name in set.versionNames {
            var attributes: [String] = []
            if name == plan.storeVersionName {
                attributes += ["style=filled", "fillcolor=lightblue", "xlabel=\"store\""]
            }
            if name == plan.targetVersionName { attributes.append("peripheries=2") }
            lines.append(
                "  \(quoted(name))" + (attributes.isEmpty ? "" : " [\(attributes.joined(separator: ", "))]") + ";")
        }
        for stage in plan.stages {
            let label = stage.kindLabel(separator: " + ")
            let style = stage.isInferred ? ", style=dashed" : ""
            lines.append(
                "  \(quoted(stage.sourceVersionName)) -> \(quoted(stage.destinationVersionName)) [label=\(quoted(label))\(style)];"
            )
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }
}
