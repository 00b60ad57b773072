import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { ToolVersionFields } from '../tools/tool-input.validator';

/** An unsaved ToolInput kept while its dry run runs; the worker reads it as version 1 of the tool `id`. */
export interface ToolDraft {
  id: string;
  tenantId: string;
  fields: ToolVersionFields;
  secretNames: string[];
  secretsCiphertext: Buffer | null;
  createdAt: Date;
}

/** Drafts older than this are left-overs of a registry that stopped mid-run: swept on the next insert. */
const DRAFT_TTL_SECONDS = 600;

interface DraftRow {
  id: string;
  tenant_id: string;
  fields: ToolVersionFields;
  secret_names: string[];
  secrets_ciphertext: Buffer | null;
  created_at: Date;
}

/** `tool_drafts`: short-lived rows, secrets sealed by the SecretBox as a version's are. */
@Injectable()
export class ToolDraftRepository {
  constructor(private readonly db: DataSource) {}

  async insert(draft: Omit<ToolDraft, 'createdAt'>): Promise<void> {
    await this.db.query(`DELETE FROM tool_drafts WHERE created_at < now() - make_interval(secs => $1)`, [
      DRAFT_TTL_SECONDS,
    ]);
    await this.db.query(
      `INSERT INTO tool_drafts (id, tenant_id, fields, secret_names, secrets_ciphertext) VALUES ($1, $2, $3, $4, $5)`,
      [draft.id, draft.tenantId, JSON.stringify(draft.fields), draft.secretNames, draft.secretsCiphertext],
    );
  }

  async find(id: string): Promise<ToolDraft | null> {
    const rows: DraftRow[] = await this.db.query(`SELECT * FROM tool_drafts WHERE id = $1`, [id]);
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id,
      tenantId: row.tenant_id,
      fields: row.fields,
      secretNames: row.secret_names,
      secretsCiphertext: row.secrets_ciphertext,
      createdAt: row.created_at,
    };
  }

  async delete(id: string): Promise<void> {
    await this.db.query(`DELETE FROM tool_drafts WHERE id = $1`, [id]);
  }
}
