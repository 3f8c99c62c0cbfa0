// The playground page: create and open sessions, append, tombstone, see the report,
// switch backend. The chosen backend and session survive a reload.
import { Mneme } from "./mneme.js";

const $ = (id) => document.getElementById(id);
const saved = JSON.parse(localStorage.getItem("mneme-playground") ?? "{}");
let store;

function remember() {
  localStorage.setItem("mneme-playground", JSON.stringify({ backend: $("backend").value, session: $("session").value }));
}

function showError(error) {
  $("error").textContent = error ? `${error.kind ?? "error"}: ${error.message}` : "";
}

async function open() {
  store?.close();
  store = await Mneme.open({ backend: $("backend").value, namespace: "playground" });
  remember();
  await render();
}

async function render() {
  showError(null);
  const { sessions } = await store.list();
  $("sessions").replaceChildren(...sessions.map((s) => {
    const button = document.createElement("button");
    button.textContent = `${s.id} (${s.messages})`;
    button.title = s.title ?? "";
    button.onclick = () => { $("session").value = s.id; remember(); render(); };
    return button;
  }));
  const id = $("session").value;
  let transcript;
  try {
    transcript = await store.load(id);
  } catch (error) {
    if (error.kind !== "session-not-found") throw error;
    $("report").textContent = `No session "${id}" yet: append a message to start it (${store.backend}).`;
    $("transcript").replaceChildren();
    return;
  }
  const r = transcript.report;
  $("report").textContent = `${store.backend} · ${id}: ${r.entries} entries, ${transcript.chain.length} in the conversation, `
    + `${r.tombstoned} deleted, ${r.skipped.length} unreadable lines${r.torn_tail ? ", a torn last line" : ""}`;
  $("transcript").replaceChildren(...transcript.chain.map((i) => transcript.entries[i]).filter((e) => e.role).map((entry) => {
    const item = document.createElement("li");
    const role = Object.assign(document.createElement("span"), { className: `role ${entry.role}`, textContent: entry.role });
    const text = Object.assign(document.createElement("span"), { className: "text", textContent: entry.text });
    const meta = Object.assign(document.createElement("span"), { className: "meta", textContent: entry.timestamp?.slice(11, 19) ?? "" });
    const remove = Object.assign(document.createElement("button"), { textContent: "delete", title: "tombstone this entry" });
    remove.onclick = () => store.tombstone(id, entry.uuid).then(render, showError);
    item.append(role, text, meta, remove);
    return item;
  }));
}

$("backend").value = saved.backend ?? "opfs";
$("session").value = saved.session ?? "playground";
$("backend").onchange = () => open().catch(showError);
$("open").onclick = () => { remember(); render().catch(showError); };
$("append").onclick = async () => {
  const text = $("text").value.trim();
  if (!text) return;
  try {
    await store.append($("session").value, { role: $("role").value, text, cwd: "/playground" });
    $("text").value = "";
    $("role").value = $("role").value === "user" ? "assistant" : "user";
    await render();
  } catch (error) {
    showError(error);
  }
};
open().catch(showError);
