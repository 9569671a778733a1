/**
 * The focus panel's words, English and Japanese. The app may pass its own t(key, vars) instead
 * (keys are the same, prefixed "focus."); focusT(lang) makes one from these tables.
 */

export const FOCUS_STRINGS = Object.freeze({
  en: {
    "focus.switch": "Focus memory",
    "focus.off_hint": "Off: the whole conversation is sent each turn.",
    "focus.goal": "Goal",
    "focus.no_goal": "No goal yet: it is taken from your messages.",
    "focus.set_goal": "Set goal",
    "focus.constraints": "Constraints and decisions",
    "focus.no_constraints": "None yet.",
    "focus.decision": "decision",
    "focus.pin": "Pin",
    "focus.unpin": "Unpin",
    "focus.pinned": "Pinned",
    "focus.edit": "Edit",
    "focus.delete": "Delete",
    "focus.save": "Save",
    "focus.cancel": "Cancel",
    "focus.add": "Add",
    "focus.add_placeholder": "Add a constraint…",
    "focus.edit_label": "Edit text",
    "focus.conflict": "Conflicts with: {text}",
    "focus.keep_both": "Keep both",
    "focus.from_message": "from message {id}",
    "focus.cost": "Classifier: {calls} calls · {input} in / {output} out tokens",
    "focus.cost_failures": "{failures} failed",
    "focus.last": "Last message: {labels}: {reason}",
    "focus.last_failed": "Classifier failed ({error}); the message is kept as is.",
    "focus.prompt": "Prompt: {tokens} / {budget} tokens (estimated)",
    "focus.over_budget": "The goal and constraints alone exceed the budget: shorten or delete some.",
  },
  ja: {
    "focus.switch": "フォーカスメモリ",
    "focus.off_hint": "オフ：毎回、会話全体が送信されます。",
    "focus.goal": "目的",
    "focus.no_goal": "目的はまだありません。メッセージから取り出されます。",
    "focus.set_goal": "目的を設定",
    "focus.constraints": "制約と決定事項",
    "focus.no_constraints": "まだありません。",
    "focus.decision": "決定",
    "focus.pin": "固定",
    "focus.unpin": "固定を解除",
    "focus.pinned": "固定済み",
    "focus.edit": "編集",
    "focus.delete": "削除",
    "focus.save": "保存",
    "focus.cancel": "キャンセル",
    "focus.add": "追加",
    "focus.add_placeholder": "制約を追加…",
    "focus.edit_label": "テキストを編集",
    "focus.conflict": "矛盾：{text}",
    "focus.keep_both": "両方残す",
    "focus.from_message": "メッセージ {id} から",
    "focus.cost": "分類器：{calls} 回・入力 {input} / 出力 {output} トークン",
    "focus.cost_failures": "{failures} 回失敗",
    "focus.last": "直前のメッセージ：{labels}：{reason}",
    "focus.last_failed": "分類に失敗しました（{error}）。メッセージはそのまま残ります。",
    "focus.prompt": "プロンプト：{tokens} / {budget} トークン（推定）",
    "focus.over_budget": "目的と制約だけで予算を超えています。短くするか削除してください。",
  },
});

export function focusT(lang = "en") {
  const table = FOCUS_STRINGS[lang] ?? FOCUS_STRINGS.en;
  return (key, vars = {}) => {
    const template = table[key] ?? FOCUS_STRINGS.en[key] ?? key;
    return template.replace(/\{(\w+)\}/g, (_, name) => (name in vars ? String(vars[name]) : `{${name}}`));
  };
}
