/**
 * Prompt size in tokens, estimated without a tokenizer (none ships with Reflector, and the
 * endpoint's model is unknown: any OpenAI-compatible server may sit behind it).
 *
 * The estimate counts 3 ASCII characters per token and 1 token per other UTF-16 code unit.
 * English prose runs at about 4 characters per token in common BPE vocabularies, but prompts
 * here are mostly JSON (quotes, braces, ids, URLs, escaped `\u003c`), which runs nearer 3; CJK
 * and emoji cost about a token per character. So the estimate errs high: a prompt built to fit
 * `LLM_PROMPT_MAX_TOKENS` by this count fits by the model's count too, give or take. The
 * `reflector_llm_prompt_tokens` histogram shows the estimate next to what the endpoint reports,
 * so the ratio can be checked in production.
 */

export const asciiCharsPerToken = 3;
/** Per chat message: role and separators. */
const messageOverheadTokens = 4;

export function estimateTokens(text: string): number {
  let ascii = 0;
  let other = 0;
  for (let i = 0; i < text.length; i += 1) {
    if (text.charCodeAt(i) < 128) ascii += 1;
    else other += 1;
  }
  return Math.ceil(ascii / asciiCharsPerToken) + other;
}

/** Estimated tokens of a chat request's messages. */
export function estimateMessagesTokens(messages: readonly { content: string }[]): number {
  return messages.reduce((sum, m) => sum + messageOverheadTokens + estimateTokens(m.content), 0);
}

/** The estimate of chat messages whose content may be structured (only text parts count). */
export function estimateChatTokens(messages: readonly { content?: unknown }[]): number {
  return estimateMessagesTokens(
    messages.map((m) => ({ content: typeof m.content === "string" ? m.content : "" })),
  );
}
