import { withFieldsRenamed } from '../../common/errors'

/**
 * Runs a service call whose body came from a mutation's input, so that a validation error names the input's
 * fields where the service names the body's: `rename` gets each field (`body.title`, `body.1.title`) and
 * returns the input's (`input.todoItem.title`, `input.todoItems.1.title`). Other errors pass as they are.
 */
export async function namingFields<T>(rename: (field: string) => string, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    throw withFieldsRenamed(error, rename)
  }
}

/** `namingFields` for a body given whole at `path` (`body.title` becomes `<path>.title`). */
export const namingInput = <T>(path: string, call: () => Promise<T>) =>
  namingFields((field) => field.replace(/^body(?=\.|$)/, path), call)
