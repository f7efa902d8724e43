package io.github.mongowriteguard.spring.boot;

import io.github.mongowriteguard.spring.data.GuardedMongoTemplate;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * At startup, once every singleton exists, checks each {@link GuardedMongoTemplate} bean (the one repositories use
 * too) the way its first write would: a {@code MongoClient} bean of the application that was not built through
 * {@code WriteGuard.configure} stops the application here, with the Spring fix, instead of failing every write.
 */
final class GuardedTemplateStartupCheck implements SmartInitializingSingleton {
    private final ListableBeanFactory beans;

    GuardedTemplateStartupCheck(ListableBeanFactory beans) {
        this.beans = beans;
    }

    @Override
    public void afterSingletonsInstantiated() {
        Map<String, GuardedMongoTemplate> templates = beans.getBeansOfType(GuardedMongoTemplate.class, false, false);
        templates.forEach((name, template) -> {
            try {
                template.checkGuardable();
            } catch (IllegalStateException | IllegalArgumentException refused) {
                throw new WriteGuardConfigurationException(
                        null,
                        "The guarded MongoTemplate bean '" + name + "' cannot write through the guard: "
                                + refused.getMessage(),
                        "If the application declares its own MongoClient bean, build it through the guard: inject"
                                + " WriteGuard into that @Bean method and return"
                                + " MongoClients.create(writeGuard.configure(settingsBuilder).build()); or remove the"
                                + " bean and change Spring Boot's client with a MongoClientSettingsBuilderCustomizer"
                                + " bean (spring.mongodb.* properties), which the guard configures for you. A"
                                + " MongoDatabaseFactory of your own that is not Spring's"
                                + " SimpleMongoClientDatabaseFactory does not name its client: build the template with"
                                + " new GuardedMongoTemplate(factory, converter, writeGuard, client)."
                                + " mongo.write-guard.enabled=false turns the guard off",
                        refused);
            }
        });
    }
}
