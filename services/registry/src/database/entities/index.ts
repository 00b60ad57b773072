import { ApiKeyEntity } from './api-key.entity';
import { AuditEventEntity } from './audit-event.entity';
import { InvocationEntity } from './invocation.entity';
import { TenantEntity } from './tenant.entity';
import { ToolVersionEntity } from './tool-version.entity';
import { ToolEntity } from './tool.entity';

export { ApiKeyEntity, AuditEventEntity, InvocationEntity, TenantEntity, ToolEntity, ToolVersionEntity };

export const REGISTRY_ENTITIES = [
  TenantEntity,
  ApiKeyEntity,
  ToolEntity,
  ToolVersionEntity,
  AuditEventEntity,
  InvocationEntity,
];
