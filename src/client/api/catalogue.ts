/** `client.catalogue`: the catalogues and what the workspace holds (bare arrays). */
import type { z } from "zod";
import type { ClientCore } from "../core";
import type { HttpRequest } from "../transport";
import {
  LanguageRow,
  ModelRow,
  NumberRowResponse,
  TranscriberRow,
  TtsCapabilities,
  VoiceRow,
  WhatsAppNumberRow,
  WhatsAppTemplateRowResponse,
} from "../undocumented";

/** Catalogues: models, voices, transcribers, languages, TTS capabilities; numbers and templates. */
export class Catalogue {
  constructor(private readonly core: ClientCore) {}

  private get<S extends z.ZodType>(schema: S, path: string, query?: HttpRequest["query"]) {
    return this.core.call(schema, { method: "GET", path, query, retry: "idempotent" });
  }

  /** `GET /v1/models`. */
  models(): Promise<z.infer<typeof ModelRow>[]> {
    return this.get(ModelRow.array(), "/v1/models");
  }
  /** `GET /v1/voices`, optionally filtered by provider and language. */
  voices(filter: { provider?: string; language?: string } = {}): Promise<z.infer<typeof VoiceRow>[]> {
    return this.get(VoiceRow.array(), "/v1/voices", { provider: filter.provider, language: filter.language });
  }
  /** `GET /v1/transcribers`. */
  transcribers(): Promise<z.infer<typeof TranscriberRow>[]> {
    return this.get(TranscriberRow.array(), "/v1/transcribers");
  }
  /** `GET /v1/languages`. */
  languages(): Promise<z.infer<typeof LanguageRow>[]> {
    return this.get(LanguageRow.array(), "/v1/languages");
  }
  /** `GET /v1/tts-capabilities`: per provider, its model, languages, speed and emotion support. */
  ttsCapabilities(): Promise<z.infer<typeof TtsCapabilities>> {
    return this.get(TtsCapabilities, "/v1/tts-capabilities");
  }
  /** `GET /v1/numbers`: phone numbers the workspace holds. */
  numbers(): Promise<z.infer<typeof NumberRowResponse>[]> {
    return this.get(NumberRowResponse.array(), "/v1/numbers");
  }
  /** `GET /v1/whatsapp/numbers`. */
  whatsappNumbers(): Promise<z.infer<typeof WhatsAppNumberRow>[]> {
    return this.get(WhatsAppNumberRow.array(), "/v1/whatsapp/numbers");
  }
  /** `GET /v1/whatsapp/templates`: approved templates. */
  whatsappTemplates(): Promise<z.infer<typeof WhatsAppTemplateRowResponse>[]> {
    return this.get(WhatsAppTemplateRowResponse.array(), "/v1/whatsapp/templates");
  }
}
