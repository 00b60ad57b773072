import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  createLoggerModule,
  HealthModule,
  MetricsModule,
  PostgresReadinessCheck,
  RedisReadinessCheck,
} from '@toolhost/observability';
import { PiToolDiscovery } from '@toolhost/sandbox';
import { DataSource } from 'typeorm';
import { AuditRepository } from './audit/audit.repository';
import { ApiKeyGuard } from './auth/api-key.guard';
import { AuthService } from './auth/auth.service';
import { InternalTokenGuard } from './auth/internal-token.guard';
import { registryDataSourceOptions } from './database/registry-data-source';
import { ToolEventsPublisher } from './events/tool-events.publisher';
import { DryRunQueue } from './dry-runs/dry-run-queue';
import { DryRunsController } from './dry-runs/dry-runs.controller';
import { DryRunsService } from './dry-runs/dry-runs.service';
import { ToolDraftRepository } from './dry-runs/tool-draft.repository';
import { GenerationController } from './generation/generation.controller';
import { GenerationService } from './generation/generation.service';
import { InternalController } from './internal/internal.controller';
import { InternalService } from './internal/internal.service';
import { InvocationLogController } from './invocations/invocation-log.controller';
import { InvocationLogRepository } from './invocations/invocation-log.repository';
import { InvocationLogService } from './invocations/invocation-log.service';
import { OutcomesRepository } from './outcomes/outcomes.repository';
import { OutcomesService } from './outcomes/outcomes.service';
import { RegistryLifecycle } from './registry-lifecycle';
import type { RegistrySettings } from './registry-settings';
import type { RegistryConfig } from './registry.config';
import { REGISTRY_CONFIG, REGISTRY_SETTINGS } from './registry.tokens';
import { ApiKeyRepository } from './tenants/api-key.repository';
import { TenantRepository } from './tenants/tenant.repository';
import { TenantsController } from './tenants/tenants.controller';
import { TenantsService } from './tenants/tenants.service';
import { PiModuleInspector } from './tools/pi-module.inspector';
import { SecretBox } from './tools/secret-box';
import { ToolRepository } from './tools/tool.repository';
import { ToolsController } from './tools/tools.controller';
import { ToolsService } from './tools/tools.service';
import { TransferController } from './transfer/transfer.controller';
import { TransferService } from './transfer/transfer.service';

@Module({})
export class RegistryModule {
  static forRoot(config: Readonly<RegistryConfig>, settings: RegistrySettings): DynamicModule {
    // Created here so that the health module (which checks it) and RegistryLifecycle (which closes it) share it.
    const redisCheck = new RedisReadinessCheck(config.REDIS_URL);
    return {
      module: RegistryModule,
      imports: [
        createLoggerModule('registry', config.LOG_LEVEL),
        TypeOrmModule.forRoot(registryDataSourceOptions(config.DATABASE_URL, config.DATABASE_POOL_SIZE)),
        MetricsModule.forRoot({ eventLoopResolutionMs: config.METRICS_EVENT_LOOP_RESOLUTION_MS }),
        HealthModule.forRoot({
          useFactory: (db: DataSource) => [new PostgresReadinessCheck(db), redisCheck],
          inject: [DataSource],
        }),
      ],
      // Before ToolsController: `POST /v1/tools/test` and `/generate` are their routes, not tool ids'.
      controllers: [
        TenantsController,
        DryRunsController,
        GenerationController,
        ToolsController,
        InvocationLogController,
        TransferController,
        InternalController,
      ],
      providers: [
        { provide: REGISTRY_CONFIG, useValue: config },
        { provide: REGISTRY_SETTINGS, useValue: settings },
        { provide: RedisReadinessCheck, useValue: redisCheck },
        { provide: SecretBox, useFactory: () => new SecretBox(settings.secretsKey) },
        {
          provide: PiModuleInspector,
          useFactory: () =>
            new PiModuleInspector(new PiToolDiscovery({ concurrency: config.PI_DISCOVERY_CONCURRENCY })),
        },
        RegistryLifecycle,
        AuthService,
        ApiKeyGuard,
        InternalTokenGuard,
        AuditRepository,
        TenantRepository,
        ApiKeyRepository,
        ToolRepository,
        TenantsService,
        ToolsService,
        TransferService,
        InternalService,
        InvocationLogRepository,
        InvocationLogService,
        ToolEventsPublisher,
        {
          provide: OutcomesRepository,
          useFactory: (db: DataSource) => new OutcomesRepository(db),
          inject: [DataSource],
        },
        OutcomesService,
        DryRunQueue,
        ToolDraftRepository,
        DryRunsService,
        GenerationService,
      ],
    };
  }
}
