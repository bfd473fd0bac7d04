// The home page's import form: sends a CSV or NDJSON file to POST /{basePath}/import and shows the server's
// progress (docs/guide/import.md, "Progress") as the lines are written. The file goes with an
// Idempotency-Key made when it was chosen: when the connection drops, the page sends the file again with the
// same key and the server skips the lines it already committed, so nothing is imported twice.

const MAX_RESUMPTIONS = 5

/** Reads a Server-Sent Events stream, calling `onEvent(name, data)` for each event as it completes. */
async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader()
  let pending = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return
    pending += value
    let end
    while ((end = pending.indexOf('\n\n')) !== -1) {
      const block = pending.slice(0, end)
      pending = pending.slice(end + 2)
      let name = 'message'
      const data = []
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim()
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart())
      }
      onEvent(name, JSON.parse(data.join('\n')))
    }
  }
}

function describe(report) {
  const parts = [`${report.imported.toLocaleString()} imported`]
  if (report.skipped) parts.push(`${report.skipped.toLocaleString()} already in`)
  if (report.failed) parts.push(`${report.failed.toLocaleString()} failed`)
  return parts.join(', ') + (report.dryRun ? ' (dry run: nothing written)' : '')
}

async function runImport(form) {
  const file = form.elements.file.files[0]
  if (!file) return
  const path = form.elements.resource.value
  const button = form.querySelector('button')
  const bar = form.querySelector('progress')
  const status = form.querySelector('.status')
  const errors = form.querySelector('.errors')
  const ndjson = /\.(ndjson|jsonl)$/i.test(file.name)
  const parameters = new URLSearchParams()
  if (form.elements.dryRun.checked) parameters.set('dryRun', 'true')
  const onConflict = form.elements.resource.selectedOptions[0]?.dataset.onConflict
  if (onConflict) parameters.set('onConflict', onConflict)
  const query = parameters.size ? `?${parameters}` : ''
  const headers = {
    'content-type': ndjson ? 'application/x-ndjson' : 'text/csv',
    accept: 'text/event-stream',
    ...(form.elements.dryRun.checked ? {} : { 'idempotency-key': form.dataset.key })
  }
  button.disabled = true
  errors.replaceChildren()
  bar.value = 0
  let resumptions = 0
  let report
  try {
    while (!report) {
      try {
        const response = await fetch(`/${path}/import${query}`, { method: 'POST', headers, body: file })
        if (!response.ok) {
          const error = await response.json().catch(() => ({ message: response.statusText }))
          throw Object.assign(new Error(error.message), { refused: true })
        }
        await readEvents(response.body, (name, data) => {
          if (name === 'progress') {
            bar.max = data.bytesTotal || file.size || 1
            bar.value = data.bytesRead
            status.textContent =
              `${data.linesRead.toLocaleString()} lines read, ${describe(data)}` +
              (resumptions ? ` (resumed ${resumptions}×)` : '')
          } else if (name === 'report') {
            report = data
          } else if (name === 'error') {
            throw Object.assign(new Error(data.message), { refused: true })
          }
        })
        if (!report) throw new Error('The import stopped before its report')
      } catch (error) {
        // A refusal is the server's answer; a dropped connection is sent again under the same key.
        if (error.refused || headers['idempotency-key'] === undefined || resumptions >= MAX_RESUMPTIONS) {
          throw error
        }
        resumptions++
      }
    }
    bar.max = 1
    bar.value = 1
    status.textContent =
      `Done: ${report.lines.toLocaleString()} lines, ${describe(report)}` +
      (resumptions ? ` (resumed ${resumptions}×)` : '')
    for (const error of report.errors) {
      const item = document.createElement('li')
      item.textContent = `line ${error.line}${error.field ? `, ${error.field}` : ''}: ${error.message}`
      errors.append(item)
    }
  } catch (error) {
    status.textContent = `Import failed: ${error.message}`
  } finally {
    button.disabled = false
  }
}

for (const form of document.querySelectorAll('form[data-import]')) {
  // A new key per chosen file: sending the same file again after a failure resumes it, another one starts anew.
  form.elements.file.addEventListener('change', () => (form.dataset.key = crypto.randomUUID()))
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    void runImport(form)
  })
}
