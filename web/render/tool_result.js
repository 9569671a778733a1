export function renderToolContent(container, items) { container.textContent = JSON.stringify(items); }
