package io.github.mongowriteguard.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.methods;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The package rules of the core module, checked on every build: what a user types, catches or reads never exposes an
 * internal type, and the {@code internal} packages hold nothing a user needs.
 */
class ArchitectureTest {
    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .withImportOption(location -> !location.contains("/testkit/")) // the emulator is another module
            .importPackages("io.github.mongowriteguard");

    @Test
    void publicMethodsOfPublicTypes_neverReturnOrTakeAnInternalType() {
        methods()
                .that()
                .arePublic()
                .and()
                .areDeclaredInClassesThat()
                .arePublic()
                .and()
                .areDeclaredInClassesThat()
                .resideOutsideOfPackage("io.github.mongowriteguard.internal..")
                .should(new ArchCondition<JavaMethod>("neither return nor take a type of an internal package") {
                    @Override
                    public void check(JavaMethod method, ConditionEvents events) {
                        List<JavaClass> types = new ArrayList<>(method.getRawParameterTypes());
                        types.add(method.getRawReturnType());
                        for (JavaClass type : types) {
                            if (type.getPackageName().contains(".internal")) {
                                events.add(SimpleConditionEvent.violated(
                                        method, method.getFullName() + " exposes " + type.getName()));
                            }
                        }
                    }
                })
                .check(CORE);
    }

    @Test
    void internalServerFacts_dependOnNothingOfTheGuard() {
        noClasses()
                .that()
                .resideInAPackage("io.github.mongowriteguard.internal.server..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.github.mongowriteguard..")
                .andShould()
                .dependOnClassesThat()
                .resideOutsideOfPackages("io.github.mongowriteguard.internal.server..", "java..")
                .allowEmptyShould(true)
                .check(CORE);
    }

    @Test
    void theBulkPlanner_dependsOnNoExecutionCopiesOrMetrics() {
        noClasses()
                .that()
                .resideInAPackage("io.github.mongowriteguard.internal.plan..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "io.github.mongowriteguard.internal.command..",
                        "io.github.mongowriteguard.internal.execution..",
                        "io.github.mongowriteguard.internal.catalog..",
                        "io.github.mongowriteguard.internal.copies..",
                        "io.github.mongowriteguard.internal.outcome..",
                        "io.github.mongowriteguard.copies..",
                        "io.github.mongowriteguard.metrics..",
                        "io.github.mongowriteguard.outcome..")
                .check(CORE);
    }

    /**
     * {@code bulk} is what a user reads of a plan, and nothing else: interfaces and enums, which depend on no other
     * package of the guard. The planner and the encoder's helpers are in {@code internal.plan}.
     */
    @Test
    void theBulkPackage_isTheUsersReadOnlyViewOfAPlan() {
        classes()
                .that()
                .resideInAPackage("io.github.mongowriteguard.bulk")
                .and()
                .areTopLevelClasses()
                .should()
                .beInterfaces()
                .orShould()
                .beEnums()
                .check(CORE);
        noClasses()
                .that()
                .resideInAPackage("io.github.mongowriteguard.bulk")
                .should()
                .dependOnClassesThat(JavaClass.Predicates.resideInAPackage("io.github.mongowriteguard..")
                        .and(JavaClass.Predicates.resideOutsideOfPackage("io.github.mongowriteguard.bulk")))
                .check(CORE);
    }

    /**
     * The round loop and the encoder see a plan through {@code bulk}'s public view and {@code internal.plan}'s public
     * entry types ({@code PlannedBulk} and the encoder's helpers), never the planner's parts.
     */
    @Test
    void commandAndExecution_usePlansOnlyThroughTheViewAndThePlannedBulk() {
        noClasses()
                .that()
                .resideInAnyPackage(
                        "io.github.mongowriteguard.internal.command..",
                        "io.github.mongowriteguard.internal.execution..")
                .should()
                .dependOnClassesThat(com.tngtech.archunit.base.DescribedPredicate.describe(
                        "planning types other than bulk's public view and internal.plan's entry types",
                        (JavaClass type) -> type.getPackageName().equals("io.github.mongowriteguard.internal.plan")
                                && !PLAN_ENTRY_TYPES.contains(type.getName().replaceFirst("\\$.*", ""))))
                .check(CORE);
    }

    /** What {@code internal.command} and {@code internal.execution} may use of {@code internal.plan}. */
    private static final java.util.Set<String> PLAN_ENTRY_TYPES = java.util.Set.of(
            "io.github.mongowriteguard.internal.plan.PlannedBulk",
            "io.github.mongowriteguard.internal.plan.BulkPlanner",
            "io.github.mongowriteguard.internal.plan.PlanOptions",
            "io.github.mongowriteguard.internal.plan.KeyPlacement",
            "io.github.mongowriteguard.internal.plan.SingleDocumentById",
            "io.github.mongowriteguard.internal.plan.WriteRecord",
            "io.github.mongowriteguard.internal.plan.DocumentShortcuts",
            "io.github.mongowriteguard.internal.plan.IndexList",
            "io.github.mongowriteguard.internal.plan.NestingDepth",
            "io.github.mongowriteguard.internal.plan.PlainValue");

    /**
     * An internal type is public only because another package of the guard uses it: one its own package alone uses is
     * package-private, so that what is public in {@code internal} is the seams between its packages, nothing more.
     */
    @Test
    void publicInternalTypes_areUsedFromAnotherPackage() {
        classes()
                .that()
                .arePublic()
                .and()
                .areTopLevelClasses()
                .and()
                .resideInAPackage("io.github.mongowriteguard.internal..")
                .should(new ArchCondition<JavaClass>("be used from another package of the guard") {
                    @Override
                    public void check(JavaClass type, ConditionEvents events) {
                        boolean usedElsewhere = type.getDirectDependenciesToSelf().stream()
                                .anyMatch(dependency -> !dependency
                                        .getOriginClass()
                                        .getPackageName()
                                        .equals(type.getPackageName()));
                        if (!usedElsewhere) {
                            events.add(SimpleConditionEvent.violated(
                                    type,
                                    type.getName() + " is public but only its own package uses it: make it"
                                            + " package-private"));
                        }
                    }
                })
                .check(CORE);
    }

    @Test
    void internalSubpackages_haveNoCycles() {
        slices().matching("io.github.mongowriteguard.internal.(*)..")
                .should()
                .beFreeOfCycles()
                .check(CORE);
    }

    /**
     * What a user types, catches or reads never names an internal type: no public constructor, method or field of a
     * public type outside {@code internal} takes, returns or holds one (type arguments included), and no such type
     * extends or implements one.
     */
    @Test
    void publicTypesOfPublicPackages_exposeNoInternalTypeInAPublicSignature() {
        classes()
                .that()
                .arePublic()
                .and()
                .resideOutsideOfPackage("io.github.mongowriteguard.internal..")
                .should(new ArchCondition<JavaClass>("expose no internal type in a public signature") {
                    @Override
                    public void check(JavaClass type, ConditionEvents events) {
                        if (!isExported(type)) {
                            return;
                        }
                        List<JavaClass> supertypes = new ArrayList<>(type.getRawInterfaces());
                        type.getRawSuperclass().ifPresent(supertypes::add);
                        for (JavaClass supertype : supertypes) {
                            report(events, type, type.getName() + " extends " + supertype.getName(), supertype);
                        }
                        List<JavaCodeUnit> units = new ArrayList<>(type.getCodeUnits());
                        for (JavaCodeUnit unit : units) {
                            if (!unit.getModifiers().contains(JavaModifier.PUBLIC)
                                    || unit.getModifiers().contains(JavaModifier.SYNTHETIC)) {
                                continue;
                            }
                            for (JavaType parameter : unit.getParameterTypes()) {
                                for (JavaClass involved : parameter.getAllInvolvedRawTypes()) {
                                    report(events, type, unit.getFullName() + " takes " + involved.getName(), involved);
                                }
                            }
                            for (JavaClass involved : unit.getReturnType().getAllInvolvedRawTypes()) {
                                report(events, type, unit.getFullName() + " returns " + involved.getName(), involved);
                            }
                        }
                        for (JavaField field : type.getFields()) {
                            if (field.getModifiers().contains(JavaModifier.PUBLIC)) {
                                for (JavaClass involved : field.getType().getAllInvolvedRawTypes()) {
                                    report(
                                            events,
                                            type,
                                            field.getFullName() + " holds " + involved.getName(),
                                            involved);
                                }
                            }
                        }
                    }

                    /** Public, and every enclosing type public too: a user can name it. */
                    private boolean isExported(JavaClass type) {
                        for (JavaClass t = type;
                                t != null;
                                t = t.getEnclosingClass().orElse(null)) {
                            if (!t.getModifiers().contains(JavaModifier.PUBLIC)) {
                                return false;
                            }
                        }
                        return true;
                    }

                    private void report(ConditionEvents events, JavaClass type, String what, JavaClass involved) {
                        if (involved.getPackageName().startsWith("io.github.mongowriteguard.internal")) {
                            events.add(SimpleConditionEvent.violated(type, what));
                        }
                    }
                })
                .check(CORE);
    }

    /**
     * Every package of the core, the root's and {@code internal}'s own classes included, imports the others in one
     * direction only: each package is its own slice, so a cycle through the root or through {@code internal}'s own
     * classes is seen too.
     */
    @Test
    void everyPackage_isFreeOfCycles() {
        slices().assignedFrom(EACH_PACKAGE).should().beFreeOfCycles().check(CORE);
    }

    /** The capability packages (and {@code internal}, one slice) import each other in one direction only. */
    @Test
    void corePackages_haveNoCycles() {
        slices().matching("io.github.mongowriteguard.(*)..")
                .should()
                .beFreeOfCycles()
                .check(CORE);
    }

    /** Each package of the guard its own slice, the root package included. */
    static final SliceAssignment EACH_PACKAGE = new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
            return javaClass.getPackageName().startsWith("io.github.mongowriteguard")
                    ? SliceIdentifier.of(javaClass.getPackageName())
                    : SliceIdentifier.ignore();
        }

        @Override
        public String getDescription() {
            return "each package of io.github.mongowriteguard, the root included";
        }
    };

    /** Every exception the guard throws is in {@code io.github.mongowriteguard.exception}: one place to catch from. */
    @Test
    void exceptions_liveInTheExceptionPackage() {
        classes()
                .that()
                .areAssignableTo(Throwable.class)
                .should()
                .resideInAPackage("io.github.mongowriteguard.exception")
                .check(CORE);
    }
}
