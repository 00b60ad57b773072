import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { RegistryClientModule } from '../registry/registry-client.module';
import { ToolListingService } from './tool-listing.service';
import { ToolsController } from './tools.controller';

/** Agent-facing tool listings (`GET /v1/tools`); exports the listing service for the MCP and gRPC transports. */
@Module({
  imports: [AuthModule, RegistryClientModule],
  controllers: [ToolsController],
  providers: [ToolListingService],
  exports: [ToolListingService],
})
export class ToolsModule {}
