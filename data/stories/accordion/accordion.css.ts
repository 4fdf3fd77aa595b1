import { createStyles } from 'plaited'
import { accordionTokens } from './accordion.tokens.ts'

export const styles = createStyles({
  accordion: {
    borderWidth: '1px',
    borderStyle: 'solid',
    borderColor: accordionTokens.border,
    borderRadius: '0.5rem',
    backgroundColor: accordionTokens.surface,
  },
  heading: {
    margin: '0',
    borderBottomWidth: '1px',
    borderBottomStyle: 'solid',
    borderBottomColor: accordionTokens.border,
  },
  trigger: {
    display: 'flex',
    justifyContent: 'space-between',
    alignItems: 'center',
    width: '100%',
    padding: '0.75rem 1rem',
    border: 'none',
    background: 'none',
    color: accordionTokens.heading,
    fontSize: '1rem',
    fontWeight: '600',
    textAlign: 'left',
    cursor: 'pointer',
  },
  disabled: {
    color: accordionTokens.disabled,
    cursor: 'not-allowed',
  },
  icon: {
    transition: 'transform 150ms',
  },
  iconOpen: {
    transform: 'rotate(180deg)',
  },
  panel: {
    padding: '0.75rem 1rem',
    color: accordionTokens.body,
    lineHeight: '1.5',
  },
})
