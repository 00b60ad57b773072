import type { ToolVersionFields } from './tool-input.validator';

/** A version row as the service builds it; the repository adds ids and timestamps. */
export interface NewToolVersionRow extends ToolVersionFields {
  codeSha256: string;
  secretNames: string[];
  secretsCiphertext: Buffer | null;
}

/** A tool with the version it currently points at. */
export interface StoredTool<Tool, Version> {
  tool: Tool;
  version: Version;
}
